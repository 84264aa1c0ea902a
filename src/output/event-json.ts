import { formatCookieHex } from '../ovn/cookie';
import { chainText, type NetworkEvent, type VerdictStep } from '../events/network-event';
import { toHex } from './hex';
import { jsonString, member, numberMember } from './json-text';
import { packetJsonText } from './packet-json';
import { sharedJson } from './shared-json';

/** Bumped when a field changes meaning or goes away; new fields may appear without it. */
export const EVENT_JSON_VERSION = 1;

/** RFC 3339 UTC time with nanoseconds; the date and time of a second made once for the events of that second. */
class IsoClock {
  private second = -1n;
  private prefix = '';

  format(timestampNs: bigint): string {
    const second = timestampNs / 1_000_000_000n;
    if (second !== this.second) {
      this.second = second;
      this.prefix = new Date(Number(second) * 1000).toISOString().slice(0, 19);
    }
    return `${this.prefix}.${String(timestampNs - second * 1_000_000_000n).padStart(9, '0')}Z`;
  }
}

function step(step: VerdictStep): string {
  const ids = step.cookie;
  return (
    `{"verdict":"${step.verdict}","text":${jsonString(step.text)},"policy":${jsonString(step.policy)},"samples":${step.samples}` +
    (ids === undefined ? '' : `,"cookie":"${formatCookieHex(ids)}","obsDomainId":${ids.obsDomainId},"obsPointId":${ids.obsPointId}`) +
    member('event', step.event === undefined ? undefined : sharedJson(step.event)) +
    '}'
  );
}

/**
 * One JSON line per packet, written field by field (no intermediate object; the decoder's
 * events, endpoints and datapaths, shared by many packets, written once each). The schema is in
 * README.md ("watch --format json"); bigints are decimal strings, bytes lowercase hex. `packet`
 * is the first sample's `data` decoded (as `event.packet` is), written by the native decoder.
 */
export class JsonFormatter {
  private readonly clock = new IsoClock();

  constructor(private readonly interfaceName: (ifindex: number) => string | undefined) {}

  format(event: NetworkEvent): string {
    const first = event.samples[0]!;
    const iface = this.interfaceName(event.iifindex);
    const cookie = first.userCookie;
    let steps = '';
    for (const s of event.chain) steps += steps === '' ? step(s) : `,${step(s)}`;
    return (
      `{"version":${EVENT_JSON_VERSION},"time":"${this.clock.format(event.timestampNs)}","timestampNs":"${event.timestampNs}"` +
      `,"verdict":"${event.verdict}","message":${jsonString(chainText(event))}` +
      member('src', event.src === undefined ? undefined : sharedJson(event.src)) +
      member('dst', event.dst === undefined ? undefined : sharedJson(event.dst)) +
      `,"chain":[${steps}]` +
      `,"group":${event.group},"iifindex":${event.iifindex}` +
      member('interface', iface === undefined ? undefined : jsonString(iface)) +
      numberMember('oifindex', event.oifindex) +
      numberMember('nsid', event.nsid) +
      `,"origSize":${first.origSize},"rate":${first.rate},"probability":${first.probability}` +
      member('cookie', cookie === undefined ? undefined : `"${toHex(cookie)}"`) +
      member('datapath', event.datapath === undefined ? undefined : sharedJson(event.datapath)) +
      `,"samples":${event.samples.length},"packet":${packetJsonText(first.data, first.proto)},"data":"${toHex(first.data)}"}\n`
    );
  }
}

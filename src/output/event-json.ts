import { formatCookieHex } from '../ovn/cookie';
import { chainText, type NetworkEvent, type VerdictStep } from '../events/network-event';
import type { PsampleMessage } from '../psample/types';
import { toHex } from './hex';

/** Bumped when a field changes meaning or goes away; new fields may appear without it. */
export const EVENT_JSON_VERSION = 1;

/** RFC 3339 UTC time with nanoseconds. */
export function isoTime(timestampNs: bigint): string {
  const iso = new Date(Number(timestampNs / 1_000_000n)).toISOString();
  return `${iso.slice(0, 19)}.${String(timestampNs % 1_000_000_000n).padStart(9, '0')}Z`;
}

function member(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${value}`;
}

function number(value: number | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}

function step(step: VerdictStep): string {
  const ids = step.cookie;
  return (
    `{"verdict":"${step.verdict}","text":${JSON.stringify(step.text)},"policy":${JSON.stringify(step.policy)},"samples":${step.samples}` +
    member('cookie', ids === undefined ? undefined : `"${formatCookieHex(ids)}"`) +
    member('obsDomainId', number(ids?.obsDomainId)) +
    member('obsPointId', number(ids?.obsPointId)) +
    member('event', step.event === undefined ? undefined : JSON.stringify(step.event)) +
    '}'
  );
}

/**
 * One JSON line per packet, written field by field (no intermediate object). The schema is in
 * README.md ("watch --format json"); bigints are decimal strings, bytes lowercase hex.
 */
export class JsonFormatter {
  constructor(private readonly interfaceName: (ifindex: number) => string | undefined) {}

  format(event: NetworkEvent): string {
    const first: PsampleMessage = event.samples[0]!;
    const iface = this.interfaceName(event.iifindex);
    let steps = '';
    for (const s of event.chain) steps += steps === '' ? step(s) : `,${step(s)}`;
    return (
      `{"version":${EVENT_JSON_VERSION},"time":"${isoTime(event.timestampNs)}","timestampNs":"${event.timestampNs}"` +
      `,"verdict":"${event.verdict}","message":${JSON.stringify(chainText(event))}` +
      member('src', event.src === undefined ? undefined : JSON.stringify(event.src)) +
      member('dst', event.dst === undefined ? undefined : JSON.stringify(event.dst)) +
      `,"chain":[${steps}]` +
      `,"group":${event.group},"iifindex":${event.iifindex}` +
      member('interface', iface === undefined ? undefined : JSON.stringify(iface)) +
      member('oifindex', number(event.oifindex)) +
      member('nsid', number(event.nsid)) +
      `,"origSize":${first.origSize},"rate":${first.rate},"probability":${first.probability}` +
      member('cookie', first.userCookie === undefined ? undefined : `"${toHex(first.userCookie)}"`) +
      member('datapath', event.datapath === undefined ? undefined : JSON.stringify(event.datapath)) +
      `,"samples":${event.samples.length},"packet":${JSON.stringify(event.packet)},"data":"${toHex(first.data)}"}\n`
    );
  }
}

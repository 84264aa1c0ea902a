import { formatCookieHex } from '../ovn/cookie';
import { chainText, type NetworkEvent, type VerdictStep } from '../events/network-event';
import type { IpfixSample } from '../ipfix/types';
import { epochSecondsOf, firstSampleOf, nanosecondsOf, sampleCountOf } from '../events/event-samples';
import { LineBuffer } from './line-buffer';
import { toHex } from './hex';
import { jsonString, member, numberMember } from './json-text';
import { writePacketJsonTail } from './packet-forms';
import { sharedJson, sharedJsonBytes } from './shared-json';

/** Bumped when a field changes meaning or goes away; new fields may appear without it. */
export const EVENT_JSON_VERSION = 1;

/** RFC 3339 UTC time with nanoseconds; the date and time of a second made once for the events of that second. */
class IsoClock {
  private second = -1;
  private prefix = '';

  format(seconds: number, nanoseconds: number): string {
    if (seconds !== this.second) {
      this.second = seconds;
      this.prefix = new Date(seconds * 1000).toISOString().slice(0, 19);
    }
    return `${this.prefix}.${String(nanoseconds).padStart(9, '0')}Z`;
  }
}

/** The time in ns since the epoch, as the decimal digits of timestampNs. */
function nanosecondsText(seconds: number, nanoseconds: number): string {
  return seconds === 0 ? String(nanoseconds) : `${seconds}${String(nanoseconds).padStart(9, '0')}`;
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

/** What a line says of its chain, in UTF-8: before the endpoints (`verdict`, `message`) and after them (`chain`). */
interface ChainJson {
  readonly head: Buffer;
  readonly steps: Buffer;
}
// Chains are shared by every packet that takes the same way (src/events/verdict-chains.ts).
const chainJson = new WeakMap<readonly VerdictStep[], ChainJson>();

function chainJsonOf(event: NetworkEvent): ChainJson {
  let json = chainJson.get(event.chain);
  if (json === undefined) {
    let steps = '';
    for (const s of event.chain) steps += steps === '' ? step(s) : `,${step(s)}`;
    json = {
      head: Buffer.from(`,"verdict":"${event.verdict}","message":${jsonString(chainText(event))}`),
      steps: Buffer.from(`,"chain":[${steps}]`),
    };
    chainJson.set(event.chain, json);
  }
  return json;
}

/** Where an IPFIX record came from and the packets it stands for: `"source":"ipfix","exporter":"ADDR:PORT","weight":W`. */
function ipfixMembers(record: IpfixSample): string {
  const { address, port } = record.exporter;
  return `,"source":"ipfix","exporter":"${address.includes(':') ? `[${address}]` : address}:${port}","weight":${record.weight}`;
}

/** Interface names met before they start over. */
const MAX_INTERFACE_NAMES = 4096;

/**
 * One JSON line per packet, assembled as bytes (no intermediate object or string of the whole
 * line): what the database gives (the chain, the endpoints, the datapath), shared by many
 * packets, copied from bytes made once each; the packet and its bytes written by the native
 * decoder's JSON writer from the packet decoded for grouping. The schema is in README.md
 * ("watch --format json"); bigints are decimal strings, bytes lowercase hex. A source without
 * the packet's bytes gets no `packet` and no `data`.
 */
export class JsonFormatter {
  private readonly clock = new IsoClock();
  private readonly interfaces = new Map<string, string>();
  private readonly scratch = new LineBuffer();

  constructor(private readonly interfaceName: (ifindex: number) => string | undefined) {}

  /** The line of `event`, '\n' included, written at the end of `out`. */
  write(event: NetworkEvent, out: LineBuffer): void {
    const first = firstSampleOf(event);
    const chain = chainJsonOf(event);
    const seconds = epochSecondsOf(event);
    const nanoseconds = nanosecondsOf(event);
    out.latin1(
      `{"version":${EVENT_JSON_VERSION},"time":"${this.clock.format(seconds, nanoseconds)}","timestampNs":"${nanosecondsText(seconds, nanoseconds)}"`,
    );
    out.bytes(chain.head);
    if (event.src !== undefined) {
      out.latin1(',"src":');
      out.bytes(sharedJsonBytes(event.src));
    }
    if (event.dst !== undefined) {
      out.latin1(',"dst":');
      out.bytes(sharedJsonBytes(event.dst));
    }
    out.bytes(chain.steps);
    const record = event.ipfix;
    const iface = record === undefined ? this.interfaceName(event.iifindex) : record.packet.ingressInterfaceName;
    const cookie = first.userCookie;
    const numbers =
      `,"group":${event.group},"iifindex":${event.iifindex}` +
      (iface === undefined ? '' : this.interfaceJson(iface)) +
      (record === undefined ? '' : ipfixMembers(record)) +
      numberMember('oifindex', event.oifindex) +
      numberMember('nsid', event.nsid) +
      `,"origSize":${first.origSize},"rate":${first.rate},"probability":${first.probability}` +
      (cookie === undefined ? '' : `,"cookie":"${toHex(cookie)}"`);
    if (event.datapath === undefined) {
      out.utf8(`${numbers},"samples":${sampleCountOf(event)}`);
    } else {
      out.utf8(`${numbers},"datapath":`);
      out.bytes(sharedJsonBytes(event.datapath));
      out.latin1(`,"samples":${sampleCountOf(event)}`);
    }
    if (!writePacketJsonTail(event.fields, out)) out.latin1('}\n');
  }

  /** The line of `event` as a string ('\n' included). */
  format(event: NetworkEvent): string {
    this.write(event, this.scratch);
    const line = this.scratch.take().toString();
    this.scratch.recycle();
    return line;
  }

  private interfaceJson(name: string): string {
    let json = this.interfaces.get(name);
    if (json === undefined) {
      if (this.interfaces.size >= MAX_INTERFACE_NAMES) this.interfaces.clear();
      json = `,"interface":${jsonString(name)}`;
      this.interfaces.set(name, json);
    }
    return json;
  }
}

import { endpointText, type Endpoint } from '../ovn/endpoint';
import { chainText, type NetworkEvent } from '../events/network-event';
import type { Verdict } from '../events/verdict';
import { escapeControl } from './control-text';
import { packetTuple } from './packet-tuple';

const VERDICT_TEXT: Readonly<Record<Verdict, string>> = { allow: 'ALLOW', drop: 'DROP', pass: 'PASS', reject: 'REJECT', unknown: '?' };
const COLORS: Readonly<Record<Verdict, string>> = {
  allow: '\u001b[32m',
  drop: '\u001b[31m',
  reject: '\u001b[31m',
  pass: '\u001b[33m',
  unknown: '\u001b[2m',
};
const RESET = '\u001b[0m';
/** Columns widen to fit what they have shown, up to this; longer values push the line along. */
const MAX_COLUMN = 40;

/** HH:MM:SS (local time) of a second, cached: events come many to a second. */
class ClockText {
  private second = -1;
  private text = '';

  format(timestampNs: bigint): string {
    const second = Number(timestampNs / 1_000_000_000n);
    if (second !== this.second) {
      const date = new Date(second * 1000);
      const two = (n: number): string => String(n).padStart(2, '0');
      this.second = second;
      this.text = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
    }
    return `${this.text}.${String(Number((timestampNs / 1000n) % 1_000_000n)).padStart(6, '0')}`;
  }
}

function side(endpoint: Endpoint | undefined, ip: string | undefined): string {
  return endpoint === undefined ? (ip ?? '-') : endpointText(endpoint);
}

function addresses(event: NetworkEvent): [string | undefined, string | undefined] {
  const network = event.packet.network;
  if (network === undefined) return [undefined, undefined];
  return network.kind === 'arp' ? [network.senderIp, network.targetIp] : [network.src, network.dst];
}

/** The namespace the verdict is about: the deciding policy's, else the destination pod's, else the source's. */
export function eventNamespace(event: NetworkEvent): string | undefined {
  for (let i = event.chain.length - 1; i >= 0; i--) {
    const namespace = event.chain[i]!.event?.owner?.namespace;
    if (namespace !== undefined) return namespace;
  }
  return event.dst?.namespace ?? event.src?.namespace;
}

/** The steps' short policy names: "anp:pass-monitoring→isolation:shop". */
export function policyText(event: NetworkEvent): string {
  let text = '';
  for (const step of event.chain) text += text === '' ? step.policy : `→${step.policy}`;
  return text;
}

/**
 * One aligned line per packet for a person: time, verdict, policy, namespace, source → destination
 * (pods when known), addresses and ports, input interface, then the verdict chain.
 */
export class HumanFormatter {
  private readonly clock = new ClockText();
  private readonly widths = [0, 6, 0, 0, 0, 0, 0];

  constructor(
    private readonly color: boolean,
    private readonly interfaceName: (ifindex: number) => string | undefined,
  ) {}

  format(event: NetworkEvent): string {
    const [srcIp, dstIp] = addresses(event);
    const verdict = VERDICT_TEXT[event.verdict];
    const columns = [
      this.clock.format(event.timestampNs),
      verdict,
      policyText(event),
      eventNamespace(event) ?? '-',
      `${side(event.src, srcIp)} → ${side(event.dst, dstIp)}`,
      packetTuple(event.packet),
      this.interfaceName(event.iifindex) ?? `if${event.iifindex}`,
    ];
    let line = '';
    for (let i = 0; i < columns.length; i++) {
      const value = escapeControl(columns[i]!);
      const width = (this.widths[i] = Math.min(MAX_COLUMN, Math.max(this.widths[i]!, value.length)));
      const padded = value.length < width ? value + ' '.repeat(width - value.length) : value;
      line += i === 1 && this.color ? `${COLORS[event.verdict]}${padded}${RESET}  ` : `${padded}  `;
    }
    return `${line}${escapeControl(chainText(event))}\n`;
  }
}

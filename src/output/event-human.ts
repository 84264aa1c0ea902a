import { chainText, eventNamespace, policyText, sideText, type NetworkEvent, type VerdictStep } from '../events/network-event';
import type { Endpoint } from '../ovn/endpoint';
import type { Verdict } from '../events/verdict';
import { epochSecondsOf, nanosecondsOf } from '../events/event-samples';
import { escapeControl } from './control-text';
import { LineBuffer } from './line-buffer';
import { packetTuple } from './packet-forms';

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

  format(seconds: number, nanoseconds: number): string {
    if (seconds !== this.second) {
      const date = new Date(seconds * 1000);
      const two = (n: number): string => String(n).padStart(2, '0');
      this.second = seconds;
      this.text = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
    }
    return `${this.text}.${String(Math.floor(nanoseconds / 1000)).padStart(6, '0')}`;
  }
}

/** What a line shows of its chain, escaped: chains are shared by every packet that takes the same way. */
interface ChainText {
  readonly policy: string;
  readonly sentence: string;
}
const chainTexts = new WeakMap<readonly VerdictStep[], ChainText>();

function chainTextOf(event: NetworkEvent): ChainText {
  let text = chainTexts.get(event.chain);
  if (text === undefined) {
    text = { policy: escapeControl(policyText(event)), sentence: escapeControl(chainText(event)) };
    chainTexts.set(event.chain, text);
  }
  return text;
}

// Escaping is per character, so each side is escaped on its own: an endpoint's text once per
// endpoint (PodDirectory shares one per address), an address (the native decoder's text) never.
const escapedSides = new WeakMap<Endpoint, string>();

function escapedSide(event: NetworkEvent, side: 'src' | 'dst'): string {
  const endpoint = event[side];
  if (endpoint === undefined) return sideText(event, side);
  let text = escapedSides.get(endpoint);
  if (text === undefined) {
    text = escapeControl(sideText(event, side));
    escapedSides.set(endpoint, text);
  }
  return text;
}

/** Interface names met before they start over. */
const MAX_INTERFACE_NAMES = 4096;

/**
 * One aligned line per packet for a person: time, verdict, policy, namespace, source → destination
 * (pods when known), the packet's tuple (native/packet/packet_text.h), input interface, then the
 * verdict chain.
 */
export class HumanFormatter {
  private readonly clock = new ClockText();
  private readonly widths = [0, 6, 0, 0, 0, 0, 0];
  private readonly scratch = new LineBuffer();
  /** Interface names as the line shows them, escaped. */
  private readonly interfaces = new Map<string, string>();

  constructor(
    private readonly color: boolean,
    private readonly interfaceName: (ifindex: number) => string | undefined,
  ) {}

  /** The line of `event`, '\n' included, written at the end of `out`. */
  write(event: NetworkEvent, out: LineBuffer): void {
    const chain = chainTextOf(event);
    const verdict = this.column(1, VERDICT_TEXT[event.verdict]);
    const line =
      `${this.column(0, this.clock.format(epochSecondsOf(event), nanosecondsOf(event)))}  ` +
      (this.color ? `${COLORS[event.verdict]}${verdict}${RESET}  ` : `${verdict}  `) +
      `${this.column(2, chain.policy)}  ` +
      `${this.column(3, escapeControl(eventNamespace(event) ?? '-'))}  ` +
      `${this.column(4, `${escapedSide(event, 'src')} → ${escapedSide(event, 'dst')}`)}  ` +
      `${this.column(5, packetTuple(event.fields))}  ` +
      `${this.column(6, this.interfaceText(event))}  ` +
      `${chain.sentence}\n`;
    out.utf8(line);
  }

  /** The line of `event` as a string ('\n' included). */
  format(event: NetworkEvent): string {
    this.write(event, this.scratch);
    const line = this.scratch.take().toString();
    this.scratch.recycle();
    return line;
  }

  /** The ingress interface's name: the record's for IPFIX (OVS names it), else the node's for the ifindex. */
  private interfaceText(event: NetworkEvent): string {
    const record = event.ipfix;
    const name = record === undefined ? this.interfaceName(event.iifindex) : record.packet.ingressInterfaceName;
    if (name === undefined) return record === undefined ? `if${event.iifindex}` : '-';
    let text = this.interfaces.get(name);
    if (text === undefined) {
      if (this.interfaces.size >= MAX_INTERFACE_NAMES) this.interfaces.clear();
      text = escapeControl(name);
      this.interfaces.set(name, text);
    }
    return text;
  }

  /** `value` padded to its column's width, which grows to fit it. */
  private column(index: number, value: string): string {
    const width = (this.widths[index] = Math.min(MAX_COLUMN, Math.max(this.widths[index]!, value.length)));
    return value.length < width ? value + ' '.repeat(width - value.length) : value;
  }
}

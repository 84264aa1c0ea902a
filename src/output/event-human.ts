import type { NetworkEvent, VerdictStep } from '../events/network-event';
import { epochSecondsOf, nanosecondsOf } from '../events/event-samples';
import { addon, type NativeHumanLineWriter } from '../native/binding';
import { PacketFieldsView } from '../packet/fields';
import { humanTextsOf, ifindexText, interfaceText, localSecondsOfDay } from './human-texts';
import { LineBuffer } from './line-buffer';

const MAX_TEXTS = addon.HumanLineWriter.maxTexts;

/** Texts ids by what the texts are made of: the chain, then each side (its endpoint, else its address), then the interface's text. */
type TextsIds = WeakMap<readonly VerdictStep[], Map<unknown, Map<unknown, Map<string, number>>>>;

/**
 * One aligned line per packet for a person: time, verdict, policy, namespace, source → destination
 * (pods when known), the packet's tuple, input interface, then the verdict chain. Written
 * natively (native/render/event_human.h), one call per event, from the texts made once per chain,
 * sides and interface name (src/output/human-texts.ts) and kept natively by id; psample's lines without pcapng
 * are written per release instead (src/output/native-event-lines.ts), by the same writer.
 */
export class HumanFormatter {
  readonly #writer: NativeHumanLineWriter;
  readonly #scratch = new LineBuffer();
  // The local time of day of the last second shown: events come many to a second.
  #second = -1;
  #secondsOfDay = 0;
  #textsIds: TextsIds = new WeakMap();
  #nextTexts = 0;

  constructor(
    color: boolean,
    private readonly interfaceName: (ifindex: number) => string | undefined,
  ) {
    this.#writer = new addon.HumanLineWriter({ color });
  }

  /** The line of `event`, '\n' included, written at the end of `out`. */
  write(event: NetworkEvent, out: LineBuffer): void {
    const texts = this.#textsId(event, this.#interfaceText(event));
    const seconds = epochSecondsOf(event);
    if (seconds !== this.#second) {
      this.#second = seconds;
      this.#secondsOfDay = localSecondsOfDay(seconds);
    }
    const fields = event.fields;
    // Without the packet's bytes (IPFIX) the tuple is "-".
    const packet = fields instanceof PacketFieldsView ? fields : undefined;
    const line = (at: number): number =>
      this.#writer.write(
        out.buffer,
        at,
        seconds,
        nanosecondsOf(event),
        this.#secondsOfDay,
        texts,
        packet?.words,
        packet?.slot,
        packet?.data,
      );
    let end = line(out.end);
    if (end < 0) {
      out.room(-end);
      end = line(out.end);
    }
    out.end = end;
  }

  /** The line of `event` as a string ('\n' included). */
  format(event: NetworkEvent): string {
    this.write(event, this.#scratch);
    const line = this.#scratch.take().toString();
    this.#scratch.recycle();
    return line;
  }

  /** The id of the event's texts, set natively the first time they are met. */
  #textsId(event: NetworkEvent, iface: string): number {
    let bySrc = this.#textsIds.get(event.chain);
    if (bySrc === undefined) this.#textsIds.set(event.chain, (bySrc = new Map<unknown, Map<unknown, Map<string, number>>>()));
    const src = event.src ?? event.fields.src;
    let byDst = bySrc.get(src);
    if (byDst === undefined) bySrc.set(src, (byDst = new Map<unknown, Map<string, number>>()));
    const dst = event.dst ?? event.fields.dst;
    let byInterface = byDst.get(dst);
    if (byInterface === undefined) byDst.set(dst, (byInterface = new Map<string, number>()));
    let id = byInterface.get(iface);
    if (id === undefined) {
      if (this.#nextTexts === MAX_TEXTS) {
        // Made-up chains, pods and names must not grow the table without end: start over.
        this.#writer.clearTexts();
        this.#textsIds = new WeakMap();
        this.#nextTexts = 0;
        return this.#textsId(event, iface);
      }
      id = this.#nextTexts++;
      const texts = humanTextsOf(event);
      this.#writer.setTexts(id, texts.verdict, texts.policy, texts.namespace, texts.sides, iface, texts.sentence);
      byInterface.set(iface, id);
    }
    return id;
  }

  /** The ingress interface's name: the record's for IPFIX (OVS names it), else the node's for the ifindex. */
  #interfaceText(event: NetworkEvent): string {
    const record = event.ipfix;
    if (record === undefined) return ifindexText(this.interfaceName(event.iifindex), event.iifindex);
    const name = record.packet.ingressInterfaceName;
    return name === undefined ? '-' : interfaceText(name);
  }
}

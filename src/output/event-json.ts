import type { NetworkEvent } from '../events/network-event';
import type { IpfixSample } from '../ipfix/types';
import { firstSampleOf, sampleCountOf, summaryOf } from '../events/event-samples';
import { addon, type NativeEventJsonWriter } from '../native/binding';
import { PacketFieldsView } from '../packet/fields';
import { LineBuffer } from './line-buffer';
import { chainJsonOf } from './chain-json';
import { jsonString } from './json-text';
import { sharedJsonBytes } from './shared-json';

const { slot: SLOT, slots: SLOTS, maxPieces: MAX_PIECES, version } = addon.EventJsonWriter;

/** Bumped when a field changes meaning or goes away; new fields may appear without it (native/render/event_json.h). */
export const EVENT_JSON_VERSION: number = version;

/** The most pieces one line sets: the chain's two, two endpoints, the interface, the datapath. */
const PIECES_PER_LINE = 6;
const TWO_32 = 0x1_0000_0000n;

/** The line's member naming the input interface: `,"interface":"NAME"`. */
export function interfaceJson(name: string): Buffer {
  return Buffer.from(`,"interface":${jsonString(name)}`);
}

/**
 * One JSON line per packet, written natively in one call (native/render/event_json.h): the
 * packet's and its first sample's parts from their bytes (read from the batch record where the
 * event came from a batch), what the database and configuration give (the chain, the endpoints,
 * the interface name, the datapath) as JSON bytes made here once per chain, endpoint, name or
 * datapath and kept natively by id. The schema is in README.md ("watch --format json"); bigints
 * are decimal strings, bytes lowercase hex. A source without the packet's bytes gets no `packet`
 * and no `data`.
 */
export class JsonFormatter {
  readonly #writer: NativeEventJsonWriter = new addon.EventJsonWriter();
  readonly #numbers = new Float64Array(SLOTS);
  readonly #scratch = new LineBuffer();
  // Piece ids by what they are made of; chains (shared by every packet that takes the same way),
  // endpoints and datapaths are immutable objects the library shares; names are strings.
  #objects = new WeakMap<object, number>();
  readonly #names = new Map<string, number>();
  readonly #ipfixTexts = new Map<string, number>();
  #nextPiece = 0;

  constructor(private readonly interfaceName: (ifindex: number) => string | undefined) {}

  /** The line of `event`, '\n' included, written at the end of `out`. */
  write(event: NetworkEvent, out: LineBuffer): void {
    const n = this.#numbers;
    // Every piece this line needs stays set until it is written.
    if (this.#nextPiece > MAX_PIECES - PIECES_PER_LINE) this.#clearPieces();
    const chain = this.#chainPieces(event);
    n[SLOT.head] = chain;
    n[SLOT.steps] = chain + 1;
    n[SLOT.src] = event.src === undefined ? -1 : this.#jsonPiece(event.src);
    n[SLOT.dst] = event.dst === undefined ? -1 : this.#jsonPiece(event.dst);
    n[SLOT.datapath] = event.datapath === undefined ? -1 : this.#jsonPiece(event.datapath);
    const record = event.ipfix;
    if (record === undefined) {
      const iface = this.interfaceName(event.iifindex);
      n[SLOT.interface] = iface === undefined ? -1 : this.#interfacePiece(iface);
    } else {
      n[SLOT.interface] = this.#ipfixPiece(record);
    }
    n[SLOT.samples] = sampleCountOf(event);
    const fields = event.fields;
    const packet = fields instanceof PacketFieldsView ? fields : undefined;
    n[SLOT.slot] = packet === undefined ? -1 : packet.slot;
    const summary = summaryOf(event);
    const batch = summary?.recordBatch;
    let bytes: Uint8Array | undefined;
    let cookie: Uint8Array | undefined;
    if (batch !== undefined) {
      n[SLOT.record] = summary!.recordAt;
      n[SLOT.littleEndian] = batch.littleEndian ? 1 : 0;
      n[SLOT.timeFromRecord] = summary!.recordTime ? 1 : 0;
      if (!summary!.recordTime) this.#time(event.timestampNs);
      bytes = batch.bytes;
    } else {
      const first = firstSampleOf(event);
      n[SLOT.record] = -1;
      this.#time(event.timestampNs);
      n[SLOT.group] = event.group;
      n[SLOT.iifindex] = event.iifindex;
      n[SLOT.oifindex] = event.oifindex ?? -1;
      n[SLOT.hasNsid] = event.nsid === undefined ? 0 : 1;
      n[SLOT.nsid] = event.nsid ?? 0;
      n[SLOT.origSize] = first.origSize;
      n[SLOT.rate] = first.rate;
      n[SLOT.probability] = first.probability ? 1 : 0;
      bytes = packet?.data;
      cookie = first.userCookie;
    }
    n[SLOT.outAt] = out.end;
    let end = this.#writer.write(out.buffer, n, packet?.words, bytes, cookie);
    if (end < 0) {
      out.room(-end);
      n[SLOT.outAt] = out.end;
      end = this.#writer.write(out.buffer, n, packet?.words, bytes, cookie);
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

  #time(timestampNs: bigint): void {
    const ns = BigInt.asUintN(64, timestampNs);
    this.#numbers[SLOT.timeHigh] = Number(ns / TWO_32);
    this.#numbers[SLOT.timeLow] = Number(ns % TWO_32);
  }

  /** The chain's two pieces, what a line says of it before the endpoints (`verdict`, `message`) and after them (`chain`): the first's id. */
  #chainPieces(event: NetworkEvent): number {
    let id = this.#objects.get(event.chain);
    if (id === undefined) {
      const json = chainJsonOf(event);
      id = this.#piece(json.head);
      this.#piece(json.steps);
      this.#objects.set(event.chain, id);
    }
    return id;
  }

  /** An endpoint's or a datapath's JSON. */
  #jsonPiece(value: object): number {
    let id = this.#objects.get(value);
    if (id === undefined) {
      id = this.#piece(sharedJsonBytes(value));
      this.#objects.set(value, id);
    }
    return id;
  }

  /**
   * An IPFIX record's members where the interface goes: the ingress name OVS gave (when it did),
   * where the record came from and the packets it stands for:
   * `,"interface":NAME,"source":"ipfix","exporter":"ADDR:PORT","weight":W`.
   */
  #ipfixPiece(record: IpfixSample): number {
    const { address, port } = record.exporter;
    const name = record.packet.ingressInterfaceName;
    const text =
      (name === undefined ? '' : `,"interface":${jsonString(name)}`) +
      `,"source":"ipfix","exporter":"${address.includes(':') ? `[${address}]` : address}:${port}","weight":${record.weight}`;
    let id = this.#ipfixTexts.get(text);
    if (id === undefined) {
      id = this.#piece(Buffer.from(text));
      this.#ipfixTexts.set(text, id);
    }
    return id;
  }

  #interfacePiece(name: string): number {
    let id = this.#names.get(name);
    if (id === undefined) {
      id = this.#piece(interfaceJson(name));
      this.#names.set(name, id);
    }
    return id;
  }

  #piece(bytes: Uint8Array): number {
    const id = this.#nextPiece++;
    this.#writer.setPiece(id, bytes);
    return id;
  }

  /** Starts the pieces over: made-up chains, endpoints and names must not grow the table without end. */
  #clearPieces(): void {
    this.#writer.clearPieces();
    this.#objects = new WeakMap();
    this.#names.clear();
    this.#ipfixTexts.clear();
    this.#nextPiece = 0;
  }
}

import path from 'node:path';
import nodeGypBuild from 'node-gyp-build';

import type { PrivilegeDropReport } from '../psample/types';
import type { Verdict } from '../events/verdict';
import { ABI_SOURCE } from './abi.generated';

/** Shapes of the C++ addon (native/napi/addon.cc); src/psample talks to it, src/packet and src/output for the packet's fields and forms. */
export interface NativeReaderOptions {
  protocol: 'kernel' | 'generic' | 'usersock';
  familyId?: number;
  groupId?: number;
  netns?: string;
  groups?: number[];
  config: boolean;
  listenAllNsid: boolean;
  receiveBufferBytes: number;
  queueCapacity: number;
  /** While samples flow, hand them over this often; absent: the adaptive interval (native/socket/delivery_pace.h). */
  deliveryIntervalUs?: number;
}

/** What the socket subscribes to now: the family and group ids change when psample registers again. */
export interface NativeReaderInfo {
  familyId: number;
  groupId: number;
  kernelFilter: boolean;
  receiveBufferBytes: number;
  /** How long the last family gap lasted; absent when there was none, or its start was missed. */
  lastGapMs?: number;
}

/** Flattened batches: [buffer, count, buffer, count, ...] (native/wire/batch_layout.h). */
export type NativeBatches = Array<ArrayBuffer | number>;

export interface NativeReader {
  /** Takes queued batches; fills `stats` (STAT_NAMES order) like stats() does. */
  take(stats: Float64Array): NativeBatches;
  /** Fills `out` with every count, in STAT_NAMES order (received: only what went to a fed table; JavaScript counts what it delivers). */
  stats(out: Float64Array): void;
  /** From the next hand-off on, the reader thread adds its batches (and what is still queued) to `table` instead of queueing them for take(). */
  feed(table: NativeFlowTable): void;
  info(): NativeReaderInfo;
  /** Stops the reader thread and counts what was never delivered, plus `undelivered` messages JavaScript had taken. */
  close(undelivered: number): void;
  ref(): void;
  unref(): void;
}

export interface NativeInjector {
  send(bytes: Uint8Array): void;
  close(): void;
}

/**
 * native/napi/addon_render.cc: renders the lines of batch records in one format (native/render/sample_lines.h:
 * JSON, native/render/sample_json.h; text, native/render/sample_text.h).
 */
export interface NativeLineRenderer {
  /** The event of the samples whose 8-byte OVS cookie holds these ids, as the format writes it (JSON: the object; text: ` | message`). */
  setEvent(obsDomainId: number, obsPointId: number, bytes: Uint8Array): void;
  /** The event of the samples whose cookie is not an OVS cookie and has this many bytes (0: none). */
  setEventForCookieLength(cookieLength: number, bytes: Uint8Array): void;
  clearEvents(): void;
  /**
   * Writes the lines of `batch`'s records from record `fromIndex` (at byte `fromOffset`) into
   * out[outAt, …) until a stop (LineRenderer.stop); `state` gets where it stopped
   * (LineRenderer.state).
   */
  render(
    batch: ArrayBuffer,
    count: number,
    fromIndex: number,
    fromOffset: number,
    flags: number,
    maxLines: number,
    out: Uint8Array,
    outAt: number,
    state: Float64Array,
  ): number;
  /** The line of the record at `offset`, without '\n'; a RangeError when the record lies. */
  line(batch: ArrayBuffer, offset: number, littleEndian: boolean, event?: Uint8Array): string;
}

interface NativeLineRendererClass {
  new (format: 'json' | 'text'): NativeLineRenderer;
  readonly stop: {
    readonly end: number;
    readonly missingEvent: number;
    readonly lineLimit: number;
    readonly noRoom: number;
    readonly malformed: number;
  };
  readonly flag: { readonly littleEndian: number; readonly samplesOnly: number; readonly withEvents: number };
  readonly state: {
    readonly nextIndex: number;
    readonly nextOffset: number;
    readonly lines: number;
    readonly outEnd: number;
    readonly needed: number;
    readonly length: number;
  };
}

/**
 * native/napi/addon_event_json.cc: writes watch's JSON line of one packet (native/render/event_json.h),
 * its database parts from pieces set once each by id.
 */
export interface NativeEventJsonWriter {
  /** The bytes piece `id` stands for (below EventJsonWriter.maxPieces). */
  setPiece(id: number, bytes: Uint8Array): void;
  clearPieces(): void;
  /**
   * Writes the line `numbers` (EventJsonWriter.slot) describe at out[numbers[slot.outAt]…];
   * returns where it ends, or minus the bytes it needs when it does not fit. With a record
   * offset, `bytes` is the batch and the first sample is read from its record; without, `bytes`
   * is the packet's and `cookie` the sample's cookie.
   */
  write(out: Uint8Array, numbers: Float64Array, words?: Uint32Array, bytes?: Uint8Array, cookie?: Uint8Array): number;
}

/**
 * native/napi/addon_event_human.cc: writes watch's human line of one event (native/render/event_human.h),
 * keeping its columns' widths; the texts come escaped (src/output/control-text.ts).
 */
export interface NativeHumanLineWriter {
  /** The texts of the lines that name `id` (below HumanLineWriter.maxTexts), escaped; `verdict`: HumanLineWriter.verdict's number. */
  setTexts(id: number, verdict: number, policy: string, namespace: string, sides: string, iface: string, sentence: string): void;
  clearTexts(): void;
  /**
   * Writes the line at out[at…]; returns where it ends, or minus the bytes it needs when it does
   * not fit. `secondsOfDay`: the local time of day of `epochSeconds` (localSecondsOfDay); `texts`:
   * an id setTexts() set; the packet's tuple from its words at `slot` and its bytes, "-" without them.
   */
  write(
    out: Uint8Array,
    at: number,
    epochSeconds: number,
    nanoseconds: number,
    secondsOfDay: number,
    texts: number,
    words?: Uint32Array,
    slot?: number,
    data?: Uint8Array,
  ): number;
}

interface NativeHumanLineWriterClass {
  new (options: { color: boolean }): NativeHumanLineWriter;
  readonly verdict: Readonly<Record<Verdict, number>>;
  readonly maxTexts: number;
}

interface NativeEventJsonWriterClass {
  new (): NativeEventJsonWriter;
  readonly slot: Readonly<Record<EventJsonSlot, number>>;
  readonly slots: number;
  readonly version: number;
  readonly maxPieces: number;
}

type EventJsonSlot =
  | 'outAt'
  | 'record'
  | 'littleEndian'
  | 'timeHigh'
  | 'timeLow'
  | 'timeFromRecord'
  | 'group'
  | 'iifindex'
  | 'oifindex'
  | 'hasNsid'
  | 'nsid'
  | 'origSize'
  | 'rate'
  | 'probability'
  | 'samples'
  | 'head'
  | 'steps'
  | 'src'
  | 'dst'
  | 'interface'
  | 'datapath'
  | 'slot';

/**
 * native/napi/addon_flow_table.cc: watch --aggregate's packets grouped and summed into flows
 * natively (native/aggregate/flow_table.h); one call per delivered batch and one per drain.
 */
export interface NativeFlowTable {
  /** Takes a delivered batch; returns the packets waiting in the grouping window. The table reads its own clock (a fed table is added to on the reader thread). */
  add(batch: ArrayBuffer, count: number, littleEndian: boolean): number;
  /**
   * The flows touched since the last drain: their numbers (countSlots each, NativeFlowTable.countSlot)
   * and, for each flow not drained before, its key: id, group, packet words, address texts, cookies.
   * `stats` gets NativeFlowTable.statSlot's counters.
   */
  drain(
    final: boolean,
    endInterval: boolean,
    stats: Float64Array,
  ): [counts: Float64Array, keys: (number | Uint32Array | string | Uint8Array[])[]];
  close(): void;
  /** Whether close() was called: a reader feeding it counts what it reads as discarded at close. */
  readonly closed: boolean;
}

export type NativeFlowCountSlot = 'id' | 'sampledPackets' | 'samples' | 'packets' | 'firstNs' | 'lastNs';
export type NativeFlowStatSlot =
  'overflowSampledPackets' | 'overflowSamples' | 'overflowPackets' | 'malformedRecords' | 'pending' | 'flows';

interface NativeFlowTableClass {
  new (options: { groupWindowMs: number; maxFlows: number; bySourcePort: boolean }): NativeFlowTable;
  readonly countSlot: Readonly<Record<NativeFlowCountSlot, number>>;
  readonly countSlots: number;
  readonly statSlot: Readonly<Record<NativeFlowStatSlot, number>>;
  readonly statSlots: number;
  /** The rule of native/aggregate/flow_table.h, for checking TypeScript's packetsSampledBy against it. */
  packetsSampledBy(rate: number, probability: boolean): number;
}

/**
 * native/napi/addon_watch_lines.cc: watch's psample packets grouped, given their routes and
 * written as JSON or human lines natively (native/render/watch_lines.h); a few calls per delivered batch.
 * add() and release() return the routes first seen, 6 entries each: id, group, iifindex, packet
 * words, address texts, cookies; each is answered before render().
 */
export interface NativeWatchLines {
  add(batch: ArrayBuffer, count: number, littleEndian: boolean, nowMs: number, wallMs: number): NativeRouteKeys;
  release(nowMs: number, final: boolean): NativeRouteKeys;
  /** A route's filter answer and its line's JSON pieces (native/render/event_json.h); undefined: absent. */
  answer(
    id: number,
    accepted: boolean,
    head: Uint8Array,
    steps: Uint8Array,
    src: Uint8Array | undefined,
    dst: Uint8Array | undefined,
    iface: Uint8Array | undefined,
    datapath: Uint8Array | undefined,
  ): void;
  /** A route's filter answer and its human line's texts, escaped (native/render/event_human.h). */
  answerHuman(
    id: number,
    accepted: boolean,
    verdict: number,
    policy: string,
    namespace: string,
    sides: string,
    iface: string,
    sentence: string,
  ): void;
  /** The local time of day of `second` that render() asked for (renderSlot.clockSecond), in seconds since local midnight. */
  setClock(second: number, secondsOfDay: number): void;
  /** Writes the released packets' lines into `out` from numbers[renderSlot.at]; renderSlot says how far it got. */
  render(out: Uint8Array, numbers: Float64Array): void;
  /** countSlots per route counted since the last call. */
  takeCounts(): Float64Array;
  /** The routes are made again from the next add() or release() on. */
  forgetRoutes(): void;
  close(): void;
}

export type NativeRouteKeys = (number | Uint32Array | string | Uint8Array[])[];
export type NativeWatchCountSlot = 'id' | 'sampledPackets' | 'packets';
export type NativeWatchRenderSlot =
  'at' | 'limit' | 'left' | 'needed' | 'packets' | 'shown' | 'filtered' | 'malformedRecords' | 'pending' | 'clockSecond';

interface NativeWatchLinesClass {
  new (options: { groupWindowMs: number; bySourcePort: boolean; format: 'json' | 'human'; color: boolean }): NativeWatchLines;
  readonly countSlot: Readonly<Record<NativeWatchCountSlot, number>>;
  readonly countSlots: number;
  readonly renderSlot: Readonly<Record<NativeWatchRenderSlot, number>>;
  readonly renderSlots: number;
}

interface NativeAbi {
  littleEndian: boolean;
}

interface Addon {
  NativeReader: new (options: NativeReaderOptions, onReadable: () => void) => NativeReader;
  NativeInjector: new (options: { protocol: 'generic' | 'usersock'; groupId: number; netns?: string }) => NativeInjector;
  /** Parses one datagram; fills `stats` with what the parser counted. */
  decode(bytes: Uint8Array, familyId: number, stats: Float64Array): [ArrayBuffer, number];
  /** Frees a buffer's bytes now (it is left detached: empty, unreadable) rather than at a later garbage collection. */
  detachBuffer(buffer: ArrayBuffer): void;
  /** native/privileges/privileges.h: gives up privileges in every thread, or throws a coded error. */
  dropPrivileges(request: { user?: string; group?: string }): PrivilegeDropReport;
  /** native/packet/packet_json.h: the decoded packet's JSON; a TypeError for data that is no Uint8Array or a proto outside 0-65535. */
  packetJson(data: Uint8Array, proto: number): string;
  /** native/packet/packet_text.h: the decoded packet's one-line description; the same TypeErrors as packetJson. */
  packetText(data: Uint8Array, proto: number): string;
  /**
   * native/packet/packet_fields.h: every sample's packet of a batch decoded into `words`
   * (PACKET_FIELD_WORDS per record, group events' zero); returns the address text the slots point into.
   */
  packetFields(batch: ArrayBuffer, count: number, littleEndian: boolean, words: Uint32Array): string;
  /** One packet decoded into words[0, PACKET_FIELD_WORDS); returns its address text. */
  decodePacketFields(data: Uint8Array, proto: number, words: Uint32Array): string;
  /** native/packet/packet_text.h: the tuple (watch's packet column) of the packet in slot `slot` of `words`, its bytes `data`. */
  packetTuple(words: Uint32Array, slot: number, data: Uint8Array): string;
  /** native/packet/address_text.h: the IPv4 (length 4) or IPv6 (16) address at bytes[offset…] as text. */
  addressText(bytes: Uint8Array, offset: number, length: 4 | 16): string;
  LineRenderer: NativeLineRendererClass;
  EventJsonWriter: NativeEventJsonWriterClass;
  HumanLineWriter: NativeHumanLineWriterClass;
  NativeFlowTable: NativeFlowTableClass;
  NativeWatchLines: NativeWatchLinesClass;
  abi: NativeAbi;
}

// src/native and dist/native both sit two levels below the package root, where node-gyp-build
// finds prebuilds/ (installed packages) or build/Release (source checkouts).
const root = path.join(__dirname, '..', '..');
export const addon: Addon = nodeGypBuild(root) as Addon;

// A stale build/ or prebuild would hand over records JavaScript misreads: refuse it, loudly.
const { littleEndian, ...layout } = addon.abi;
if (JSON.stringify(layout) !== ABI_SOURCE) {
  throw new Error(
    `the native addon loaded from ${root} does not match this JavaScript build (batch layout or counters differ): ` +
      'rebuild both with `npm run build`',
  );
}

/** The byte order of the numbers in the addon's batches (the host's). */
export const NATIVE_LITTLE_ENDIAN = littleEndian;

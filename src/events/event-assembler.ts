import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { RECORD } from '../native/abi.generated';
import { OVN_COOKIE_BYTES, readCookieId, splitObservationDomain, type ObservationIds } from '../ovn/cookie';
import type { OvnSampleDecoder } from '../ovn/decoder';
import type { OvnDatapathInfo, OvnSampleEvent } from '../ovn/event';
import type { PodDirectory } from '../ovn/pod-directory';
import { decodePacket } from '../packet/decode';
import { IpfixPacketIdentity, ipfixPacketFields, ipfixSampleMessage } from '../ipfix/record-as-sample';
import type { IpfixSample } from '../ipfix/types';
import { packetFields, PacketFieldsView, type PacketFields } from '../packet/fields';
import type { DecodedPacket } from '../packet/types';
import type { PsampleBatch } from '../psample/batch';
import { recordIifindex } from '../psample/sample';
import type { PsampleMessage } from '../psample/types';
import type { SampleSummary } from './event-samples';
import { LazyEndpoints } from './lazy-endpoints';
import type { NetworkEvent, VerdictStep } from './network-event';
import { PacketGrouper, type PendingPacket } from './packet-grouper';
import { VerdictChains, type VerdictChain } from './verdict-chains';
import { policyLabel, stepText, verdictOf, type Verdict } from './verdict';

/** Samples of one packet arrive within microseconds, or milliseconds when an upcall sits between two stages. */
export const DEFAULT_GROUP_WINDOW_MS = 50;

export interface NetworkEventAssemblerOptions {
  /** Says which ACL and policy each sample hit; without it steps carry only the cookie. */
  readonly decoder?: OvnSampleDecoder;
  /** Resolves the packet's addresses to pods and nodes. */
  readonly pods?: PodDirectory;
  /** Samples of one packet within this window are one event; 0 makes every sample its own event. */
  readonly groupWindowMs?: number;
}

export interface NetworkEventAssemblerEvents {
  event: [event: NetworkEvent];
}

/** The step key of samples without an 8-byte cookie when there is no decoder: each is a step of its own. */
const NO_COOKIE = Object.freeze({});
const TWO_32 = 4_294_967_296;
/** Cookies remembered without a decoder before they start over: made-up cookies must not grow the map without end. */
const MAX_COOKIES = 65_536;

function isOvnEvent(key: object): key is OvnSampleEvent {
  return 'status' in key;
}

/** What a step says of a sample, from its key: the decoder's event, the cookie's ids, or NO_COOKIE. */
function stepOf(key: object): Omit<VerdictStep, 'samples'> {
  if (key === NO_COOKIE) return { verdict: 'unknown', text: 'No OVS cookie', policy: '-' };
  if (isOvnEvent(key)) {
    const verdict: Verdict = key.status === 'decoded' ? verdictOf(key.action) : 'unknown';
    const text = stepText(key);
    const policy = policyLabel(key);
    if (key.status === 'unknown' && key.reason === 'not-ovn-cookie') return { verdict, text, policy, event: key };
    return { verdict, text, policy, event: key, cookie: { obsDomainId: key.obsDomainId, obsPointId: key.obsPointId } };
  }
  const ids = key as ObservationIds;
  const { appId, datapathKey } = splitObservationDomain(ids.obsDomainId);
  return { verdict: 'unknown', text: `app ${appId} datapath ${datapathKey} point ${ids.obsPointId}`, policy: '-', cookie: ids };
}

/**
 * A packet: while its samples are gathered (the grouper compares new samples with it), then as
 * its event. Its first sample is read where it lies in its batch; the sample objects, the bigint
 * time and the whole decoded packet are made only when read.
 */
class PacketEvent extends LazyEndpoints implements NetworkEvent, PendingPacket, SampleSummary {
  deadline = 0;
  waiting = false;
  nextInBucket: PendingPacket | undefined = undefined;
  /** Where the packet's samples lead on the tree of chains; its chain once handed on. */
  node: VerdictChain;
  /** Set as the packet is handed on: its endpoints are resolved when first read. */
  pods: PodDirectory | undefined;
  chain: readonly VerdictStep[] = [];
  verdict: Verdict = 'unknown';
  /** The first record, for a packet an IPFIX exporter reported. */
  ipfix: IpfixSample | undefined;
  /** The samples after the first: [batch, record offset] pairs, or [message, -1]. */
  #more: (PsampleBatch | PsampleMessage | number)[] | undefined;
  #first: PsampleMessage | undefined;
  #samples: readonly PsampleMessage[] | undefined;
  #packet: DecodedPacket | undefined;
  #seconds = -1;
  #nanoseconds = 0;

  constructor(
    /** The first sample's batch and record offset, or undefined when it came as a message. */
    readonly recordBatch: PsampleBatch | undefined,
    readonly recordAt: number,
    first: PsampleMessage | undefined,
    readonly fields: PacketFields,
    readonly hash: number,
    readonly datapathKey: number,
    readonly timeNs: number,
    /** The arrival time, for kernels (before 5.13) that give no timestamp. */
    private readonly arrivalMs: number | undefined,
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly length: number,
    readonly datapath: OvnDatapathInfo | undefined,
    node: VerdictChain,
  ) {
    super();
    this.#first = first;
    this.node = node;
  }

  get group(): number {
    // Read where it lies: the metrics count by group, and need no sample object for it.
    const batch = this.recordBatch;
    return batch === undefined ? this.firstSample.group : batch.view.getUint32(this.recordAt + RECORD.group, batch.littleEndian);
  }

  join(batch: PsampleBatch | PsampleMessage, at: number): void {
    (this.#more ??= []).push(batch, at);
  }

  get firstSample(): PsampleMessage {
    return (this.#first ??= this.recordBatch!.sampleAt(this.recordAt));
  }

  get recordTime(): boolean {
    return this.arrivalMs === undefined;
  }

  get sampleCount(): number {
    return 1 + (this.#more === undefined ? 0 : this.#more.length / 2);
  }

  get timestampNs(): bigint {
    if (this.arrivalMs !== undefined) return BigInt(this.arrivalMs) * 1_000_000n;
    // Read where it lies: the human and observ lines need the time, not the sample object.
    const batch = this.recordBatch;
    if (batch === undefined) return this.firstSample.timestampNs;
    return batch.view.getBigUint64(this.recordAt + RECORD.timestamp, batch.littleEndian);
  }

  get epochSeconds(): number {
    if (this.#seconds < 0) this.#splitTime();
    return this.#seconds;
  }

  get nanoseconds(): number {
    if (this.#seconds < 0) this.#splitTime();
    return this.#nanoseconds;
  }

  #splitTime(): void {
    const ns = this.timestampNs;
    this.#seconds = Number(ns / 1_000_000_000n);
    this.#nanoseconds = Number(ns % 1_000_000_000n);
  }

  get iifindex(): number {
    // Every line reads it (the interface name): read where it lies, making no sample object.
    const batch = this.recordBatch;
    return batch === undefined ? this.firstSample.iifindex : recordIifindex(batch.view, this.recordAt, batch.littleEndian);
  }

  get oifindex(): number | undefined {
    return this.firstSample.oifindex;
  }

  get nsid(): number | undefined {
    return this.firstSample.nsid;
  }

  get samples(): readonly PsampleMessage[] {
    if (this.#samples === undefined) {
      const samples = [this.firstSample];
      const more = this.#more ?? [];
      for (let i = 0; i < more.length; i += 2) {
        const at = more[i + 1] as number;
        samples.push(at < 0 ? (more[i] as PsampleMessage) : (more[i] as PsampleBatch).sampleAt(at));
      }
      this.#samples = samples;
    }
    return this.#samples;
  }

  get packet(): DecodedPacket | undefined {
    // Fields a source filled without the packet's bytes (IPFIX) have no packet to decode.
    if (!(this.fields instanceof PacketFieldsView)) return undefined;
    const first = this.firstSample;
    return (this.#packet ??= decodePacket(first.data, first.proto));
  }
}

/**
 * Turns psample samples into NetworkEvents: one per packet, with its verdict chain (each distinct
 * cookie decoded through OVN), its source and destination resolved to pods, and its samples.
 * pushBatch() takes a socket's batches and reads each sample where it lies: it makes nothing per
 * sample but for a packet's first (its event, its fields, its pending group); push() takes one
 * message at a time.
 */
export class NetworkEventAssembler extends EventEmitter<NetworkEventAssemblerEvents> {
  private readonly decoder: OvnSampleDecoder | undefined;
  private readonly pods: PodDirectory | undefined;
  private readonly grouper: PacketGrouper<PacketEvent> | undefined;
  private readonly chains = new VerdictChains(stepOf);
  /** Without a decoder, the ids of each cookie seen, made once: the steps' keys. */
  private readonly cookies = new Map<number, Map<number, ObservationIds>>();
  private cookieCount = 0;
  /** The scratch IPFIX records' identities are written to, made with the first record. */
  private ipfixIdentity: IpfixPacketIdentity | undefined;
  private readonly forget = (): void => this.chains.clear();
  private closed = false;
  /** Without grouping, the first exception of a listener during a batch: thrown once the batch is taken. */
  private failure: { error: unknown } | undefined;

  constructor(options: NetworkEventAssemblerOptions = {}) {
    super();
    this.decoder = options.decoder;
    this.pods = options.pods;
    const windowMs = options.groupWindowMs ?? DEFAULT_GROUP_WINDOW_MS;
    this.grouper = windowMs > 0 ? new PacketGrouper<PacketEvent>(windowMs, (packet) => this.emitPacket(packet)) : undefined;
    this.decoder?.on('change', this.forget);
  }

  /** Takes the samples of a socket's batch (group events are ignored): `socket.on('batch', (b) => assembler.pushBatch(b))`. */
  pushBatch(batch: PsampleBatch): void {
    const view = batch.view;
    const le = batch.littleEndian;
    const high = le ? 4 : 0;
    // The packet the batch's previous sample went to: OVN's samples of one packet come together.
    let previous: PacketEvent | undefined;
    // The batch's samples all arrived now.
    const now = performance.now();
    for (let index = 0, at = 0; index < batch.length && !this.closed; index++) {
      const command = (view.getUint32(at + RECORD.kindCmdFlags, le) >>> 8) & 0xff;
      if (command === 0 || command >= 4) {
        const cookieLength = view.getUint32(at + RECORD.cookieLength, le);
        const cookieAt = at + view.getUint32(at + RECORD.cookieOffset, le);
        const ovsCookie = cookieLength === OVN_COOKIE_BYTES;
        const domain = ovsCookie ? view.getUint32(cookieAt, false) : 0;
        const key = this.keyOf(ovsCookie, domain, ovsCookie ? view.getUint32(cookieAt + 4, false) : 0, batch.bytes, cookieAt, cookieLength);
        const kernelNs = view.getUint32(at + RECORD.timestamp + high, le) * TWO_32 + view.getUint32(at + RECORD.timestamp + (4 - high), le);
        const dataAt = at + view.getUint32(at + RECORD.dataOffset, le);
        const dataLength = view.getUint32(at + RECORD.dataLength, le);
        const hash = batch.packetHash(index);
        const datapathKey = ovsCookie ? domain & 0xffffff : -1;
        const arrivalMs = kernelNs === 0 ? Date.now() : undefined;
        const timeNs = arrivalMs === undefined ? kernelNs : arrivalMs * 1e6;
        const repeat = previous !== undefined && batch.packetRepeats(index) ? previous : undefined;
        const pending = this.grouper?.find(hash, datapathKey, timeNs, batch.bytes, dataAt, dataLength, repeat);
        if (pending !== undefined) {
          pending.node = this.chains.next(pending.node, key);
          pending.join(batch, at);
          previous = pending;
        } else {
          const fields = batch.packetFieldsAt(index, at);
          const node = this.chains.next(this.chains.empty, key);
          const datapath = this.datapathOf(key);
          previous = new PacketEvent(
            batch,
            at,
            undefined,
            fields,
            hash,
            datapathKey,
            timeNs,
            arrivalMs,
            batch.bytes,
            dataAt,
            dataLength,
            datapath,
            node,
          );
          this.start(previous, now);
        }
      }
      if (index + 1 < batch.length) at = batch.nextOffset(at);
    }
    this.rethrow();
  }

  /** Takes one sample (group events and other commands are ignored). */
  push(message: PsampleMessage): void {
    if (message.command !== 'sample') return;
    const cookie = message.userCookie;
    const ovsCookie = cookie?.byteLength === OVN_COOKIE_BYTES;
    const domain = ovsCookie ? readCookieId(cookie, 0) : 0;
    const key = this.keyOf(
      ovsCookie,
      domain,
      ovsCookie ? readCookieId(cookie, 4) : 0,
      cookie ?? new Uint8Array(0),
      0,
      cookie?.byteLength ?? 0,
    );
    const data = message.data;
    const fields: PacketFieldsView = packetFields(data, message.proto);
    const datapathKey = ovsCookie ? domain & 0xffffff : -1;
    // Kernels before 5.13 give no timestamp: the arrival time stands in.
    const arrivalMs = message.timestampNs === 0n ? Date.now() : undefined;
    const timeNs = arrivalMs === undefined ? Number(message.timestampNs) : arrivalMs * 1e6;
    const pending = this.grouper?.find(fields.hash, datapathKey, timeNs, data, 0, data.length);
    if (pending !== undefined) {
      pending.node = this.chains.next(pending.node, key);
      pending.join(message, -1);
      return;
    }
    const node = this.chains.next(this.chains.empty, key);
    const datapath = this.datapathOf(key);
    this.start(
      new PacketEvent(undefined, -1, message, fields, fields.hash, datapathKey, timeNs, arrivalMs, data, 0, data.length, datapath, node),
    );
    this.rethrow();
  }

  /**
   * Takes IPFIX records (an IpfixSource's batches): each is a sample whose cookie is its header's
   * domain and its observationPointId, its packet the record's fields; the records OVS exports
   * for one packet's samples are grouped by those fields, as psample's by the packet's bytes.
   * Grouping uses when OVS took each sample (the record's flow start), as psample's the kernel
   * time: two pings of one flow 0.5 s apart have the same fields, and a collector that stalled
   * receives them together. A record without a flow start is placed by its arrival.
   */
  pushIpfix(records: Iterable<IpfixSample>): void {
    for (const record of records) {
      if (this.closed) break;
      const point = record.observationPointId;
      const ovsCookie = point !== undefined;
      const domain = record.observationDomainId;
      const message = ipfixSampleMessage(record);
      const cookie = message.userCookie ?? new Uint8Array(0);
      const key = this.keyOf(ovsCookie, domain, point ?? 0, cookie, 0, cookie.length);
      const identity = (this.ipfixIdentity ??= new IpfixPacketIdentity());
      const hash = identity.write(record.packet);
      const datapathKey = ovsCookie ? domain & 0xffffff : -1;
      const flowStartUs = record.flowStartUs;
      const arrivalMs = flowStartUs === undefined ? Date.now() : undefined;
      const timeNs = flowStartUs === undefined ? arrivalMs! * 1e6 : flowStartUs * 1000;
      const pending = this.grouper?.find(hash, datapathKey, timeNs, identity.bytes, 0, identity.length);
      if (pending !== undefined) {
        pending.node = this.chains.next(pending.node, key);
        pending.join(message, -1);
        continue;
      }
      const node = this.chains.next(this.chains.empty, key);
      const kept = identity.keep();
      const packet = new PacketEvent(
        undefined,
        -1,
        message,
        ipfixPacketFields(record.packet),
        hash,
        datapathKey,
        timeNs,
        arrivalMs,
        kept,
        0,
        kept.length,
        this.datapathOf(key),
        node,
      );
      packet.ipfix = record;
      this.start(packet);
    }
    this.rethrow();
  }

  /**
   * The verdict chain of a packet whose samples carried `cookies` in this order (an empty one for
   * a sample without a cookie), made as pushBatch() makes a packet's, and the datapath of its first
   * sample: what watch --aggregate's native flows (src/events/native-flows.ts) stand for.
   */
  chainOf(cookies: readonly Uint8Array[]): {
    readonly chain: readonly VerdictStep[];
    readonly verdict: Verdict;
    readonly datapath: OvnDatapathInfo | undefined;
  } {
    let node = this.chains.empty;
    let datapath: OvnDatapathInfo | undefined;
    for (let i = 0; i < cookies.length; i++) {
      const cookie = cookies[i]!;
      const ovsCookie = cookie.length === OVN_COOKIE_BYTES;
      const key = this.keyOf(
        ovsCookie,
        ovsCookie ? readCookieId(cookie, 0) : 0,
        ovsCookie ? readCookieId(cookie, 4) : 0,
        cookie,
        0,
        cookie.length,
      );
      if (i === 0) datapath = this.datapathOf(key);
      node = this.chains.next(node, key);
    }
    return { chain: node.steps, verdict: node.verdict, datapath };
  }

  /** Emits the packets still waiting for more samples. */
  flush(): void {
    this.grouper?.flush();
  }

  /** Emits the packets still waiting, then takes no more samples. */
  close(): void {
    this.closed = true;
    this.grouper?.close();
    this.decoder?.off('change', this.forget);
  }

  /** The step key of a sample: the decoder's event for its cookie, or without a decoder the cookie's ids. */
  private keyOf(ovsCookie: boolean, domain: number, point: number, bytes: Uint8Array, cookieAt: number, cookieLength: number): object {
    const decoder = this.decoder;
    if (decoder !== undefined) {
      return ovsCookie ? decoder.decode(domain, point) : decoder.decodeCookie(bytes.subarray(cookieAt, cookieAt + cookieLength));
    }
    if (!ovsCookie) return NO_COOKIE;
    if (this.cookieCount >= MAX_COOKIES) {
      this.cookies.clear();
      this.cookieCount = 0;
      this.chains.clear();
    }
    let points = this.cookies.get(domain);
    if (points === undefined) this.cookies.set(domain, (points = new Map<number, ObservationIds>()));
    let ids = points.get(point);
    if (ids === undefined) {
      points.set(point, (ids = Object.freeze({ obsDomainId: domain, obsPointId: point })));
      this.cookieCount++;
    }
    return ids;
  }

  private datapathOf(key: object): OvnDatapathInfo | undefined {
    return isOvnEvent(key) ? key.datapath : undefined;
  }

  // A listener that throws loses neither the batch's other samples nor their packets.
  private start(packet: PacketEvent, now?: number): void {
    if (this.grouper !== undefined) return this.grouper.add(packet, now);
    try {
      this.emitPacket(packet);
    } catch (error) {
      this.failure ??= { error };
    }
  }

  private rethrow(): void {
    const failure = this.failure;
    this.failure = undefined;
    if (failure !== undefined) throw failure.error;
  }

  private emitPacket(packet: PacketEvent): void {
    packet.pods = this.pods;
    packet.chain = packet.node.steps;
    packet.verdict = packet.node.verdict;
    this.emit('event', packet);
  }
}

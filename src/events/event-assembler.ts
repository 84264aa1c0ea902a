import { EventEmitter } from 'node:events';
import { RECORD } from '../native/abi.generated';
import { OVN_COOKIE_BYTES, readCookieId, splitObservationDomain, type ObservationIds } from '../ovn/cookie';
import type { OvnSampleDecoder } from '../ovn/decoder';
import type { Endpoint } from '../ovn/endpoint';
import type { OvnDatapathInfo, OvnSampleEvent } from '../ovn/event';
import type { PodDirectory } from '../ovn/pod-directory';
import { decodePacket } from '../packet/decode';
import { packetFields, type PacketFields, type PacketFieldsView } from '../packet/fields';
import type { DecodedPacket } from '../packet/types';
import type { PsampleBatch } from '../psample/batch';
import type { PsampleMessage } from '../psample/types';
import type { SampleSummary } from './event-samples';
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

/** A packet whose samples are still being gathered; its members are kept where they lie. */
class Pending implements PendingPacket {
  chain: VerdictChain;
  /** The samples after the first: [batch, record offset] pairs, or [message, -1]. */
  readonly more: (PsampleBatch | PsampleMessage | number)[] = [];

  constructor(
    readonly first: PsampleMessage,
    readonly fields: PacketFields,
    readonly hash: number,
    readonly datapathKey: number,
    readonly timeNs: number,
    /** The arrival time, for kernels (before 5.13) that give no timestamp. */
    readonly arrivalMs: number | undefined,
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly length: number,
    readonly datapath: OvnDatapathInfo | undefined,
    chain: VerdictChain,
  ) {
    this.chain = chain;
  }
}

/** A packet's event: its samples and its whole decoded packet are made when read. */
class AssembledEvent implements NetworkEvent, SampleSummary {
  readonly timestampNs: bigint;
  readonly group: number;
  readonly iifindex: number;
  readonly oifindex: number | undefined;
  readonly nsid: number | undefined;
  readonly fields: PacketFields;
  readonly src: Endpoint | undefined;
  readonly dst: Endpoint | undefined;
  readonly verdict: Verdict;
  readonly chain: readonly VerdictStep[];
  readonly datapath: OvnDatapathInfo | undefined;
  readonly #pending: Pending;
  #samples: readonly PsampleMessage[] | undefined;
  #packet: DecodedPacket | undefined;

  constructor(pending: Pending, src: Endpoint | undefined, dst: Endpoint | undefined) {
    const first = pending.first;
    this.#pending = pending;
    this.timestampNs = pending.arrivalMs === undefined ? first.timestampNs : BigInt(pending.arrivalMs) * 1_000_000n;
    this.group = first.group;
    this.iifindex = first.iifindex;
    this.oifindex = first.oifindex;
    this.nsid = first.nsid;
    this.fields = pending.fields;
    this.src = src;
    this.dst = dst;
    const chain = pending.chain.steps;
    this.chain = chain;
    this.verdict = chain[chain.length - 1]!.verdict;
    this.datapath = pending.datapath;
  }

  get firstSample(): PsampleMessage {
    return this.#pending.first;
  }

  get sampleCount(): number {
    return 1 + this.#pending.more.length / 2;
  }

  get samples(): readonly PsampleMessage[] {
    if (this.#samples === undefined) {
      const { first, more } = this.#pending;
      const samples = [first];
      for (let i = 0; i < more.length; i += 2) {
        const at = more[i + 1] as number;
        samples.push(at < 0 ? (more[i] as PsampleMessage) : (more[i] as PsampleBatch).sampleAt(at));
      }
      this.#samples = samples;
    }
    return this.#samples;
  }

  get packet(): DecodedPacket {
    const first = this.#pending.first;
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
  private readonly grouper: PacketGrouper<Pending> | undefined;
  private readonly chains = new VerdictChains(stepOf);
  /** Without a decoder, the ids of each cookie seen, made once: the steps' keys. */
  private readonly cookies = new Map<number, Map<number, ObservationIds>>();
  private cookieCount = 0;
  private readonly forget = (): void => this.chains.clear();
  private closed = false;
  /** Without grouping, the first exception of a listener during a batch: thrown once the batch is taken. */
  private failure: { error: unknown } | undefined;

  constructor(options: NetworkEventAssemblerOptions = {}) {
    super();
    this.decoder = options.decoder;
    this.pods = options.pods;
    const windowMs = options.groupWindowMs ?? DEFAULT_GROUP_WINDOW_MS;
    this.grouper = windowMs > 0 ? new PacketGrouper<Pending>(windowMs, (pending) => this.emitPacket(pending)) : undefined;
    this.decoder?.on('change', this.forget);
  }

  /** Takes the samples of a socket's batch (group events are ignored): `socket.on('batch', (b) => assembler.pushBatch(b))`. */
  pushBatch(batch: PsampleBatch): void {
    const view = batch.view;
    const le = batch.littleEndian;
    const high = le ? 4 : 0;
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
        const pending = this.grouper?.find(hash, datapathKey, timeNs, batch.bytes, dataAt, dataLength);
        if (pending !== undefined) {
          pending.chain = this.chains.next(pending.chain, key);
          pending.more.push(batch, at);
        } else {
          const first = batch.sampleAt(at);
          const fields = batch.packetFieldsAt(index, at);
          this.start(
            new Pending(
              first,
              fields,
              hash,
              datapathKey,
              timeNs,
              arrivalMs,
              batch.bytes,
              dataAt,
              dataLength,
              this.datapathOf(key),
              this.chains.next(this.chains.empty, key),
            ),
          );
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
      pending.chain = this.chains.next(pending.chain, key);
      pending.more.push(message, -1);
      return;
    }
    this.start(
      new Pending(
        message,
        fields,
        fields.hash,
        datapathKey,
        timeNs,
        arrivalMs,
        data,
        0,
        data.length,
        this.datapathOf(key),
        this.chains.next(this.chains.empty, key),
      ),
    );
    this.rethrow();
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
  private start(pending: Pending): void {
    if (this.grouper !== undefined) return this.grouper.add(pending);
    try {
      this.emitPacket(pending);
    } catch (error) {
      this.failure ??= { error };
    }
  }

  private rethrow(): void {
    const failure = this.failure;
    this.failure = undefined;
    if (failure !== undefined) throw failure.error;
  }

  private emitPacket(pending: Pending): void {
    let src: Endpoint | undefined;
    let dst: Endpoint | undefined;
    const pods = this.pods;
    if (pods !== undefined) {
      const network = pending.datapath?.network;
      const { src: srcIp, dst: dstIp } = pending.fields;
      if (srcIp !== undefined) src = pods.resolve(network, srcIp);
      if (dstIp !== undefined) dst = pods.resolve(network, dstIp);
    }
    this.emit('event', new AssembledEvent(pending, src, dst));
  }
}

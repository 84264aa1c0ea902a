import type { OvnSampleDecoder } from '../ovn/decoder';
import type { OvnDatapathInfo } from '../ovn/event';
import type { PodDirectory } from '../ovn/pod-directory';
import { addon, type NativeFlowTable } from '../native/binding';
import { PacketFieldsView } from '../packet/fields';
import type { PsampleBatch } from '../psample/batch';
import type { PsampleSocket } from '../psample/socket';
import type { NetworkEventAssembler } from './event-assembler';
import { LazyEndpoints } from './lazy-endpoints';
import type { FlowSubject, VerdictStep } from './network-event';
import type { Verdict } from './verdict';

const NativeFlowTableClass = addon.NativeFlowTable;
const COUNT = NativeFlowTableClass.countSlot;
const COUNT_SLOTS = NativeFlowTableClass.countSlots;
const STAT = NativeFlowTableClass.statSlot;
const NO_BYTES = new Uint8Array(0);

/**
 * A native flow as the per-packet path would have made its packets: the verdict chain its cookies
 * make, the endpoints its addresses resolve to, the fields of its first packet. It lives for one
 * interval (the native table forgets its flows when an interval ends); its chain is made again
 * after the decoder's answers changed.
 */
export class NativeFlow extends LazyEndpoints implements FlowSubject {
  chain: readonly VerdictStep[] = [];
  verdict: Verdict = 'unknown';
  datapath: OvnDatapathInfo | undefined;
  /** Whether the chain is the decoder's current answer. */
  madeIn = -1;
  /** The filter's answer for the current chain: undefined until asked. */
  accepted: boolean | undefined;

  constructor(
    readonly id: number,
    readonly group: number,
    readonly fields: PacketFieldsView,
    /** Each sample's cookie, in order (empty: the sample had none). */
    readonly cookies: readonly Uint8Array[],
    readonly pods: PodDirectory | undefined,
  ) {
    super();
  }

  /** Makes the chain its cookies make now (`assembler.chainOf`); `answers`: what the decoder's answers were. */
  make(assembler: NetworkEventAssembler, answers: number): void {
    const { chain, verdict, datapath } = assembler.chainOf(this.cookies);
    this.chain = chain;
    this.verdict = verdict;
    this.datapath = datapath;
    this.accepted = undefined;
    this.madeIn = answers;
  }

  /**
   * Counts in `decoder`'s stats the samples of `packets` more packets that took this flow, as the
   * per-packet path decodes each sample: making the chain decoded one packet's cookies once.
   */
  countDecodesAgain(decoder: OvnSampleDecoder | undefined, packets: number): void {
    if (decoder === undefined || packets <= 0) return;
    for (const step of this.chain) if (step.event !== undefined) decoder.countAgain(step.event, step.samples * packets);
  }
}

/** What a flow's packets add up to since the last drain. */
export interface NativeFlowCounts {
  sampledPackets: number;
  samples: number;
  /** Packets on the wire they stand for. */
  packets: number;
  /** Kernel times of the earliest and latest, ms since the epoch. */
  firstMs: number;
  lastMs: number;
}

/** What a drain found beyond its flows. */
export interface NativeFlowDrain {
  /** Sampled packets, samples and packets whose flow found the native table full (they are in no flow). */
  readonly overflow: { readonly sampledPackets: number; readonly samples: number; readonly packets: number };
  /** Records that reached outside their batch, since the table was made (skipped with the rest of their batch). */
  readonly malformedRecords: number;
}

export interface NativeFlowsOptions {
  /** Makes each flow's chain as it makes a packet's (NetworkEventAssembler.chainOf). */
  readonly assembler: NetworkEventAssembler;
  /** Told when its answers change: the flows' chains are made again. */
  readonly decoder?: OvnSampleDecoder;
  readonly pods?: PodDirectory;
  readonly groupWindowMs: number;
  /** Flows the native table holds per interval. */
  readonly maxFlows: number;
  /** Keys the source port too (a --port filter reads it). */
  readonly bySourcePort: boolean;
  /**
   * Called when flows may wait: packets waited out their window with no batch after them, or,
   * once fed by a socket's reader thread, every `drainEveryMs`. Drain then.
   */
  readonly due: () => void;
  /** Once fed by a socket (readFrom): how often `due` is called. */
  readonly drainEveryMs?: number;
}

/**
 * watch --aggregate's psample packets grouped and summed natively (native/aggregate/flow_table.h):
 * fed by the socket's reader thread (readFrom), or one addon call per delivered batch (add); one
 * call per drain, nothing per packet. A drain hands on each flow touched since the last one with
 * its counts; a flow's chain and endpoints are made once per interval, when the flow is first drained.
 */
export class NativeFlows {
  readonly #table: NativeFlowTable;
  readonly #assembler: NetworkEventAssembler;
  readonly #decoder: OvnSampleDecoder | undefined;
  readonly #pods: PodDirectory | undefined;
  readonly #windowMs: number;
  readonly #due: () => void;
  readonly #drainEveryMs: number;
  #fed: NodeJS.Timeout | undefined;
  readonly #flows = new Map<number, NativeFlow>();
  readonly #stats = new Float64Array(NativeFlowTableClass.statSlots);
  readonly #counts: NativeFlowCounts = { sampledPackets: 0, samples: 0, packets: 0, firstMs: 0, lastMs: 0 };
  /** Bumped when the decoder's answers change: a flow made before is made again when next drained. */
  #answers = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #changed = (): void => {
    this.#answers++;
  };
  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#due();
  };

  constructor(options: NativeFlowsOptions) {
    this.#table = new NativeFlowTableClass({
      groupWindowMs: options.groupWindowMs,
      maxFlows: options.maxFlows,
      bySourcePort: options.bySourcePort,
    });
    this.#assembler = options.assembler;
    this.#decoder = options.decoder;
    this.#pods = options.pods;
    this.#windowMs = options.groupWindowMs;
    this.#due = options.due;
    this.#drainEveryMs = options.drainEveryMs ?? 1000;
    this.#decoder?.on('change', this.#changed);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The socket's reader thread adds its batches to the table from its next hand-off on, and
   * `due` is called every `drainEveryMs` (the window's packets complete there). Batches the socket
   * had already handed over still come through `batch` events: give them to add().
   */
  readFrom(socket: PsampleSocket): void {
    if (this.#closed || this.#fed !== undefined) return;
    socket.feed(this.#table);
    this.#fed = setInterval(this.#due, this.#drainEveryMs).unref();
  }

  /** Takes a delivered batch (`socket.on('batch', …)`). */
  add(batch: PsampleBatch): void {
    if (this.#closed) return;
    const pending = this.#table.add(batch.buffer, batch.length, batch.littleEndian);
    // A packet's window ends with no batch after it when traffic stops: its flow is drained then.
    if (pending > 0) this.#timer ??= setTimeout(this.#onTimer, this.#windowMs).unref();
  }

  /**
   * Hands on each flow touched since the last drain, with its counts (`counts` is reused: read it
   * during the call). `final`: the packets still in their grouping window too (at stop).
   * `endInterval`: the flows are forgotten afterwards. A throwing `visit` loses no other flow: the
   * first exception is thrown once all are handed on.
   */
  drain(final: boolean, endInterval: boolean, visit: (flow: NativeFlow, counts: NativeFlowCounts) => void): NativeFlowDrain {
    if (this.#closed) return { overflow: { sampledPackets: 0, samples: 0, packets: 0 }, malformedRecords: 0 };
    const stats = this.#stats;
    const [numbers, keys] = this.#table.drain(final, endInterval, stats);
    for (let i = 0; i < keys.length; i += 5) {
      const id = keys[i] as number;
      const fields = new PacketFieldsView(keys[i + 2] as Uint32Array, 0, keys[i + 3] as string, NO_BYTES);
      this.#flows.set(id, new NativeFlow(id, keys[i + 1] as number, fields, keys[i + 4] as Uint8Array[], this.#pods));
    }
    const counts = this.#counts;
    let failure: { error: unknown } | undefined;
    for (let at = 0; at < numbers.length; at += COUNT_SLOTS) {
      const flow = this.#flows.get(numbers[at + COUNT.id]!)!;
      const made = flow.madeIn !== this.#answers;
      if (made) flow.make(this.#assembler, this.#answers);
      counts.sampledPackets = numbers[at + COUNT.sampledPackets]!;
      flow.countDecodesAgain(this.#decoder, counts.sampledPackets - (made ? 1 : 0));
      counts.samples = numbers[at + COUNT.samples]!;
      counts.packets = numbers[at + COUNT.packets]!;
      counts.firstMs = numbers[at + COUNT.firstNs]! / 1e6;
      counts.lastMs = numbers[at + COUNT.lastNs]! / 1e6;
      try {
        visit(flow, counts);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (endInterval) this.#flows.clear();
    if (this.#closed) {
      // close() from `visit`: the flows drained before it were all handed on.
    } else if (stats[STAT.pending] === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    } else if (this.#timer === undefined && !final && this.#fed === undefined) {
      this.#timer = setTimeout(this.#onTimer, this.#windowMs).unref();
    }
    if (failure !== undefined) throw failure.error;
    return {
      overflow: {
        sampledPackets: stats[STAT.overflowSampledPackets]!,
        samples: stats[STAT.overflowSamples]!,
        packets: stats[STAT.overflowPackets]!,
      },
      malformedRecords: stats[STAT.malformedRecords]!,
    };
  }

  /** Frees the table (a drain under way still hands on what it took); what it still held is lost: drain(true, true, …) first. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#fed);
    this.#timer = undefined;
    this.#decoder?.off('change', this.#changed);
    this.#table.close();
  }
}

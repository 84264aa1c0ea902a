import { performance } from 'node:perf_hooks';
import type { NetworkEventAssembler } from '../events/event-assembler';
import type { FlowSubject } from '../events/network-event';
import { NativeFlow } from '../events/native-flows';
import type { OvnPsampleMetrics } from '../metrics/metrics';
import type { OvnSampleDecoder } from '../ovn/decoder';
import type { PodDirectory } from '../ovn/pod-directory';
import { addon, type NativeRouteKeys, type NativeWatchLines } from '../native/binding';
import { PacketFieldsView } from '../packet/fields';
import type { PsampleBatch } from '../psample/batch';
import { chainJsonOf } from './chain-json';
import { interfaceJson } from './event-json';
import { humanTextsOf, ifindexText, localSecondsOfDay } from './human-texts';
import { LineBuffer } from './line-buffer';
import { sharedJsonBytes } from './shared-json';

const NativeWatchLinesClass = addon.NativeWatchLines;
const COUNT = NativeWatchLinesClass.countSlot;
const COUNT_SLOTS = NativeWatchLinesClass.countSlots;
const RENDER = NativeWatchLinesClass.renderSlot;
const NO_BYTES = new Uint8Array(0);
const UNKNOWN = addon.HumanLineWriter.verdict.unknown;

/** Lines written before they are handed on, when a release has more (as EventLines hands on). */
const HAND_ON_BYTES = 64 * 1024;

/** Routes held before they are all made again: bounds the memory made-up addresses could take. */
export const MAX_ROUTES = 16_384;

/** What the lines counted since they were made: as watch counts packets one by one. */
export interface NativeLineCounts {
  packets: number;
  shown: number;
  filtered: number;
}

export interface NativeEventLinesOptions {
  /** Makes each route's chain as it makes a packet's (NetworkEventAssembler.chainOf). */
  readonly assembler: NetworkEventAssembler;
  /** Told when its answers change: the routes are made again. */
  readonly decoder?: OvnSampleDecoder;
  /** Its generation changing makes the routes again (an address may be another pod now). */
  readonly pods?: PodDirectory;
  readonly groupWindowMs: number;
  /** watch's format: JSON lines, or the human line (coloured or not). */
  readonly format: { readonly kind: 'json' } | { readonly kind: 'human'; readonly color: boolean };
  /** Keys the source port too (a --port filter reads it). */
  readonly bySourcePort: boolean;
  readonly interfaceName: (ifindex: number) => string | undefined;
  /** The filter: asked once per route. */
  readonly accept: (subject: FlowSubject) => boolean;
  readonly metrics?: OvnPsampleMetrics;
  /** Packets to show before the rest are only counted (--count); Infinity: all. */
  readonly limit: number;
  /** Counted into as watch counts packets one by one. */
  readonly counts: NativeLineCounts;
  /** Called with the bytes of whole lines, once per release: true when the sink holds none of them afterwards (they are written over then). */
  readonly write: (lines: Buffer) => boolean;
  /** Called when packets waited out their window with no batch after them: release() then. */
  readonly due: () => void;
}

/**
 * `watch`'s psample lines, JSON or human, with nothing per packet in JavaScript
 * (native/render/watch_lines.h): a delivered batch is grouped natively, each released packet
 * given its route (group, interface, cookies, addresses, the fields a filter reads), and the
 * released packets' lines written in one call. A route's chain, endpoints, filter answer and its
 * line's parts are made here once (the chain through the assembler's chainOf(); the JSON pieces as
 * JsonFormatter makes them, the human texts as HumanFormatter does), and its packets counted
 * into the metrics once per release (observeCounts). The lines are byte for byte JsonFormatter's
 * or HumanFormatter's for the same packets.
 */
export class NativeEventLines {
  readonly #lines: NativeWatchLines;
  readonly #options: NativeEventLinesOptions;
  readonly #routes = new Map<number, NativeFlow>();
  /** Routes whose first packet's samples the decoder counted when the route's chain was made. */
  readonly #decodedOnce = new WeakSet<NativeFlow>();
  readonly #numbers = new Float64Array(NativeWatchLinesClass.renderSlots);
  readonly #out = new LineBuffer();
  #malformedRecords = 0;
  #answersChanged = false;
  #podsGeneration: number;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #changed = (): void => {
    this.#answersChanged = true;
  };
  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#options.due();
  };

  constructor(options: NativeEventLinesOptions) {
    this.#options = options;
    const format = options.format;
    this.#lines = new NativeWatchLinesClass({
      groupWindowMs: options.groupWindowMs,
      bySourcePort: options.bySourcePort,
      format: format.kind,
      color: format.kind === 'human' && format.color,
    });
    this.#podsGeneration = options.pods?.generation ?? 0;
    options.decoder?.on('change', this.#changed);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Records that reached outside their batch, since the lines were made (skipped with the rest of their batch). */
  get malformedRecords(): number {
    return this.#malformedRecords;
  }

  /** Takes a delivered batch (`socket.on('batch', …)`): the packets whose window passed are written. */
  add(batch: PsampleBatch): void {
    if (this.#closed) return;
    this.#forgetStaleRoutes();
    this.#written(this.#lines.add(batch.buffer, batch.length, batch.littleEndian, performance.now(), Date.now()));
  }

  /** Writes the packets whose window passed; `final`: every packet still waiting too (at stop). */
  release(final: boolean): void {
    if (this.#closed) return;
    this.#forgetStaleRoutes();
    this.#written(this.#lines.release(performance.now(), final));
  }

  /** Frees the native lines; what they still held is lost: release(true) first. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#options.decoder?.off('change', this.#changed);
    this.#lines.close();
  }

  #forgetStaleRoutes(): void {
    const generation = this.#options.pods?.generation ?? 0;
    if (!this.#answersChanged && generation === this.#podsGeneration && this.#routes.size < MAX_ROUTES) return;
    this.#answersChanged = false;
    this.#podsGeneration = generation;
    this.#routes.clear();
    this.#lines.forgetRoutes();
  }

  #written(keys: NativeRouteKeys): void {
    let failure: { error: unknown } | undefined;
    for (let i = 0; i < keys.length; i += 6) {
      try {
        this.#answer(keys, i);
      } catch (error) {
        // A filter or an interface lookup that throws: the route's packets are counted as filtered, none is lost uncounted.
        failure ??= { error };
        this.#refuse(keys, i);
      }
    }
    const n = this.#numbers;
    const out = this.#out;
    n[RENDER.at] = out.end;
    n[RENDER.limit] = this.#options.limit - this.#options.counts.shown;
    for (;;) {
      // A backlog's release is handed on in parts: the buffer stays a chunk, not the whole backlog.
      const end = Math.min(out.buffer.length, out.end + HAND_ON_BYTES);
      this.#lines.render(end === out.buffer.length ? out.buffer : out.buffer.subarray(0, end), n);
      out.end = n[RENDER.at]!;
      if (n[RENDER.left] === 0) break;
      const second = n[RENDER.clockSecond]!;
      if (second >= 0) {
        // A human line's second whose local time the native writer does not know yet: Date's.
        this.#lines.setClock(second, localSecondsOfDay(second));
        n[RENDER.at] = out.end;
        continue;
      }
      failure = this.#handOn(failure);
      // Closed by the writer (the output went away): the rest of the release is dropped, as close() says.
      if (this.#closed) break;
      out.room(n[RENDER.needed]!);
      n[RENDER.at] = out.end;
    }
    const counts = this.#options.counts;
    counts.packets += n[RENDER.packets]!;
    counts.shown += n[RENDER.shown]!;
    counts.filtered += n[RENDER.filtered]!;
    this.#malformedRecords = n[RENDER.malformedRecords]!;
    if (this.#closed) {
      if (failure !== undefined) throw failure.error;
      return;
    }
    const routeCounts = this.#lines.takeCounts();
    const metrics = this.#options.metrics;
    for (let at = 0; at < routeCounts.length; at += COUNT_SLOTS) {
      const route = this.#routes.get(routeCounts[at + COUNT.id]!)!;
      const sampledPackets = routeCounts[at + COUNT.sampledPackets]!;
      // The decoder's stats count every sample: the route's chain decoded its first packet's.
      route.countDecodesAgain(this.#options.decoder, sampledPackets - (this.#decodedOnce.delete(route) ? 1 : 0));
      metrics?.observeCounts(route, sampledPackets, routeCounts[at + COUNT.packets]!);
    }
    if (n[RENDER.pending] === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    } else if (this.#timer === undefined) {
      // A packet's window ends with no batch after it when traffic stops: it is written then.
      this.#timer = setTimeout(this.#onTimer, this.#options.groupWindowMs).unref();
    } else {
      // While batches come, each releases what waited out its window: the timer is for a stop in
      // the traffic, and does not wake JavaScript for a release of its own every window.
      this.#timer.refresh();
    }
    failure = this.#handOn(failure);
    if (failure !== undefined) throw failure.error;
  }

  /** Hands the lines written on; a writer that throws loses neither the counts nor the lines after: its first error is thrown once the release is counted. */
  #handOn(failure: { error: unknown } | undefined): { error: unknown } | undefined {
    const out = this.#out;
    if (out.pending === 0) return failure;
    try {
      if (this.#options.write(out.take())) out.recycle();
    } catch (error) {
      // What it was given is not held by it: written over.
      out.recycle();
      return failure ?? { error };
    }
    return failure;
  }

  #routeOf(keys: NativeRouteKeys, i: number): NativeFlow {
    const fields = new PacketFieldsView(keys[i + 3] as Uint32Array, 0, keys[i + 4] as string, NO_BYTES);
    const route = new NativeFlow(keys[i] as number, keys[i + 1] as number, fields, keys[i + 5] as Uint8Array[], this.#options.pods);
    this.#routes.set(route.id, route);
    return route;
  }

  #refuse(keys: NativeRouteKeys, i: number): void {
    const route = this.#routes.get(keys[i] as number) ?? this.#routeOf(keys, i);
    route.accepted = false;
    if (this.#options.format.kind === 'human') this.#lines.answerHuman(route.id, false, UNKNOWN, '', '', '', '', '');
    else this.#lines.answer(route.id, false, NO_BYTES, NO_BYTES, undefined, undefined, undefined, undefined);
  }

  #answer(keys: NativeRouteKeys, i: number): void {
    const options = this.#options;
    const route = this.#routeOf(keys, i);
    const id = route.id;
    route.make(options.assembler, 0);
    this.#decodedOnce.add(route);
    route.accepted = options.accept(route);
    const iifindex = keys[i + 2] as number;
    const iface = options.interfaceName(iifindex);
    if (options.format.kind === 'human') {
      const texts = humanTextsOf(route);
      this.#lines.answerHuman(
        id,
        route.accepted,
        texts.verdict,
        texts.policy,
        texts.namespace,
        texts.sides,
        ifindexText(iface, iifindex),
        texts.sentence,
      );
      return;
    }
    const datapath = route.datapath;
    const json = chainJsonOf(route);
    this.#lines.answer(
      id,
      route.accepted,
      json.head,
      json.steps,
      route.src === undefined ? undefined : sharedJsonBytes(route.src),
      route.dst === undefined ? undefined : sharedJsonBytes(route.dst),
      iface === undefined ? undefined : interfaceJson(iface),
      datapath === undefined ? undefined : sharedJsonBytes(datapath),
    );
  }
}

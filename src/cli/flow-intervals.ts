import { FlowAggregator, type FlowInterval } from '../events/flow-aggregator';
import type { FlowSubject, NetworkEvent } from '../events/network-event';
import { FlowJsonFormatter } from '../output/flow-json';
import { LineBuffer } from '../output/line-buffer';
import type { BufferedOutput } from '../output/sink';

/**
 * `watch --aggregate`: packets summed into flows, written at the end of every interval. Intervals
 * end on multiples of their length since the epoch (every node's minute ends together, so a log
 * pipeline can join them); the first is shorter, and stop() writes the last, partial one.
 */
export class FlowIntervals {
  readonly #aggregator: FlowAggregator;
  readonly #formatter = new FlowJsonFormatter();
  readonly #lines = new LineBuffer();
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #beforeEnd: ((final: boolean) => void) | undefined;
  #stopped = false;
  #endedMs = 0;

  constructor(
    seconds: number,
    maxFlows: number,
    private readonly output: BufferedOutput | undefined,
    /** Told of each interval once its lines are handed to the output. */
    private readonly written: (interval: FlowInterval) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.#intervalMs = seconds * 1000;
    this.#aggregator = new FlowAggregator(now(), maxFlows);
    this.#schedule();
  }

  add(event: NetworkEvent): void {
    if (!this.#stopped) this.#aggregator.add(event);
  }

  /** Sums packets of one way at once (FlowAggregator.addCounts). */
  addCounts(subject: FlowSubject, samples: number, packets: number, firstMs: number, lastMs: number, sampledPackets: number): void {
    if (!this.#stopped) this.#aggregator.addCounts(subject, samples, packets, firstMs, lastMs, sampledPackets);
  }

  /** Counts packets that found no room in a table in front of this one (FlowAggregator.addOverflow). */
  addOverflow(sampledPackets: number, samples: number, packets: number): void {
    if (!this.#stopped) this.#aggregator.addOverflow(sampledPackets, samples, packets);
  }

  /**
   * `hook` runs as each interval ends, before its flows are taken: a source that holds packets
   * (watch --aggregate's native flows) adds them then. `final`: the last interval, at stop().
   */
  beforeEachEnd(hook: (final: boolean) => void): void {
    this.#beforeEnd = hook;
  }

  /** Writes the interval so far and takes no more packets. */
  stop(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    try {
      this.#end(undefined, true);
    } finally {
      this.#stopped = true;
    }
  }

  #schedule(): void {
    const now = this.now();
    // Timers fire late and may fire early: the interval ends at its boundary, the next one after now.
    const boundary = (Math.floor(Math.max(now, this.#endedMs) / this.#intervalMs) + 1) * this.#intervalMs;
    this.#timer = setTimeout(() => {
      this.#endedMs = boundary;
      try {
        this.#end(boundary);
      } finally {
        this.#schedule();
      }
    }, boundary - now);
  }

  #end(endMs?: number, final = false): void {
    // What the source still held belongs to this interval, whatever its consumer throws.
    let failure: { error: unknown } | undefined;
    try {
      this.#beforeEnd?.(final);
    } catch (error) {
      failure = { error };
    }
    const interval = this.#aggregator.take(endMs ?? this.now());
    if (this.output !== undefined) {
      this.#formatter.write(interval, this.#lines);
      if (this.output.writeNow(this.#lines.take())) this.#lines.recycle();
    }
    this.written(interval);
    if (failure !== undefined) throw failure.error;
  }
}

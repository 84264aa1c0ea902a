import { FlowAggregator, type FlowInterval } from '../events/flow-aggregator';
import type { NetworkEvent } from '../events/network-event';
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

  /** Writes the interval so far and takes no more packets. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#end();
  }

  #schedule(): void {
    const now = this.now();
    // Timers fire late and may fire early: the interval ends at its boundary, the next one after now.
    const boundary = (Math.floor(Math.max(now, this.#endedMs) / this.#intervalMs) + 1) * this.#intervalMs;
    this.#timer = setTimeout(() => {
      this.#endedMs = boundary;
      this.#end(boundary);
      this.#schedule();
    }, boundary - now);
  }

  #end(endMs = this.now()): void {
    const interval = this.#aggregator.take(endMs);
    if (this.output !== undefined) {
      this.#formatter.write(interval, this.#lines);
      if (this.output.writeNow(this.#lines.take())) this.#lines.recycle();
    }
    this.written(interval);
  }
}

import type { NetworkEvent } from '../events/network-event';
import { LineBuffer } from './line-buffer';
import type { BufferedOutput } from './sink';

/** A watch format: writes an event's lines as bytes at the end of a LineBuffer. */
export interface EventFormatter {
  write(event: NetworkEvent, out: LineBuffer): void;
}

/** Lines written before they are handed on at once, when no turn of the event loop ends sooner. */
const HAND_ON_BYTES = 64 * 1024;

/**
 * The lines of a stream of events, assembled as bytes in one buffer and handed to the output
 * once per turn of the event loop (the grouper hands on many packets per timer), in one write:
 * no string per line, no concatenation. The buffer is written over once the output holds none
 * of it any more.
 */
export class EventLines {
  readonly #lines = new LineBuffer();
  #scheduled = false;

  constructor(
    private readonly formatter: EventFormatter,
    private readonly output: BufferedOutput,
  ) {}

  write(event: NetworkEvent): void {
    this.formatter.write(event, this.#lines);
    if (this.#lines.pending >= HAND_ON_BYTES) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /** Hands what is written to the output now. */
  flush(): void {
    this.#scheduled = false;
    if (this.#lines.pending === 0) return;
    if (this.output.writeNow(this.#lines.take())) this.#lines.recycle();
  }

  readonly #flush = (): void => {
    if (this.#scheduled) this.flush();
  };
}

/** Room allocated at a time; the lines of many packets share it, as Node's Buffer pool does. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Lines assembled as bytes where they will be written from: the pieces cached as bytes (an
 * endpoint's or a chain's JSON) copied in, text written in place, the packet's part written by the
 * native renderer straight into `buffer` at `end`. take() hands out what was written since the
 * last take; those bytes are never written over until recycle() says the sink is done with them.
 */
export class LineBuffer {
  /** @internal Where the native renderer writes, at `end`. */
  buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** @internal */
  end = 0;
  #start = 0;

  /** Bytes written and not taken yet. */
  get pending(): number {
    return this.end - this.#start;
  }

  /** Text of code points below 256 only (numbers, hex, time, fixed names): one byte each. */
  latin1(text: string): void {
    this.room(text.length);
    this.end += this.buffer.write(text, this.end, 'latin1');
  }

  utf8(text: string): void {
    this.room(3 * text.length);
    this.end += this.buffer.write(text, this.end, 'utf8');
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.end);
    this.end += bytes.length;
  }

  /** Makes sure `length` more bytes fit at `end`, moving what is not taken yet to a new chunk when not. */
  room(length: number): void {
    if (this.buffer.length - this.end >= length) return;
    const pending = this.buffer.subarray(this.#start, this.end);
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * (pending.length + length)));
    next.set(pending);
    this.buffer = next;
    this.#start = 0;
    this.end = pending.length;
  }

  /** What was written since the last take(). */
  take(): Buffer {
    const taken = this.buffer.subarray(this.#start, this.end);
    this.#start = this.end;
    return taken;
  }

  /** Everything taken so far is written and held by no one: the next lines go over it. */
  recycle(): void {
    if (this.#start !== this.end) return;
    this.#start = 0;
    this.end = 0;
  }
}

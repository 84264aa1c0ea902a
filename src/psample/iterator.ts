import type { PsampleSample } from './sample';

/** What an iterator tells its socket: it was consumed from (backpressure) or ended. */
export interface IteratorOwner<T = PsampleSample> {
  detach(iterator: SampleIterator<T>): void;
  iteratorDrained(): void;
}

interface Waiter<T> {
  resolve(result: IteratorResult<T>): void;
  reject(error: unknown): void;
}

/** An async iterator over a source's samples (psample's, or the IPFIX source's: T). */
export class SampleIterator<T = PsampleSample> implements AsyncIterableIterator<T> {
  readonly buffer: T[] = [];
  head = 0;
  waiter: Waiter<T> | undefined;
  done = false;
  failure: Error | undefined;

  constructor(private readonly owner: IteratorOwner<T>) {}

  get pending(): number {
    return this.buffer.length - this.head;
  }

  push(message: T): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve({ value: message, done: false });
    } else {
      this.buffer.push(message);
    }
  }

  finish(failure?: Error): void {
    this.done = true;
    this.failure = failure;
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter && failure !== undefined) waiter.reject(failure);
    else waiter?.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.buffer.length) {
      const value = this.buffer[this.head]!;
      this.head++;
      if (this.head === this.buffer.length) {
        this.buffer.length = 0;
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
        // A consumer that never quite catches up must not keep every consumed sample alive.
        this.buffer.splice(0, this.head);
        this.head = 0;
      }
      this.owner.iteratorDrained();
      return Promise.resolve({ value, done: false });
    }
    if (this.done) {
      return this.failure !== undefined ? Promise.reject(this.failure) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.owner.detach(this);
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Samples an iterator may hold undelivered before its source pauses, and resumes below. */
const HIGH_WATER = 65_536;
const LOW_WATER = 16_384;

/**
 * The async iterators of one source and the backpressure they put on it: once one of them holds
 * more than HIGH_WATER samples its consumer has not taken, the source stops delivering (the
 * backlog waits where it is bounded: the reader thread's queue, the kernel's socket buffer), and
 * it goes on once every one is down to LOW_WATER.
 */
export class SampleIterators<T> implements IteratorOwner<T> {
  readonly #open = new Set<SampleIterator<T>>();
  #paused = false;

  /** `resume`: the source delivers again (on a later turn of the event loop). */
  constructor(private readonly resume: () => void) {}

  get size(): number {
    return this.#open.size;
  }

  /** An iterator held past the high water mark, and not yet drained to the low one. */
  get paused(): boolean {
    return this.#paused;
  }

  /** A new iterator over what the source delivers from now on; ended at once if the source is `closed`. */
  open(closed: boolean): SampleIterator<T> {
    const iterator = new SampleIterator<T>(this);
    if (closed) iterator.finish();
    else this.#open.add(iterator);
    return iterator;
  }

  push(sample: T): void {
    for (const iterator of this.#open) iterator.push(sample);
  }

  /** After a delivery: pauses if an iterator holds too much; says whether the source is paused. */
  checkBacklog(): boolean {
    for (const iterator of this.#open) if (iterator.pending > HIGH_WATER) this.#paused = true;
    return this.#paused;
  }

  /** Ends every iterator, with `failure` if given (their consumers' next() rejects with it); returns how many there were. */
  finishAll(failure?: Error): number {
    const iterators = [...this.#open];
    this.#open.clear();
    for (const iterator of iterators) iterator.finish(failure);
    return iterators.length;
  }

  detach(iterator: SampleIterator<T>): void {
    this.#open.delete(iterator);
    this.iteratorDrained();
  }

  iteratorDrained(): void {
    if (!this.#paused) return;
    for (const iterator of this.#open) if (iterator.pending > LOW_WATER) return;
    this.#paused = false;
    this.resume();
  }
}

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

import type { PsampleSample } from './sample';

/** What an iterator tells its socket: it was consumed from (backpressure) or ended. */
export interface IteratorOwner {
  detach(iterator: SampleIterator): void;
  iteratorDrained(): void;
}

interface Waiter {
  resolve(result: IteratorResult<PsampleSample>): void;
  reject(error: unknown): void;
}

export class SampleIterator implements AsyncIterableIterator<PsampleSample> {
  readonly buffer: PsampleSample[] = [];
  head = 0;
  waiter: Waiter | undefined;
  done = false;
  failure: Error | undefined;

  constructor(private readonly owner: IteratorOwner) {}

  get pending(): number {
    return this.buffer.length - this.head;
  }

  push(message: PsampleSample): void {
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

  next(): Promise<IteratorResult<PsampleSample>> {
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

  return(): Promise<IteratorResult<PsampleSample>> {
    this.owner.detach(this);
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

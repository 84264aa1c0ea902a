import { EventEmitter } from 'node:events';
import os from 'node:os';

import { addon, NATIVE_LITTLE_ENDIAN, type NativeBatches, type NativeReader } from '../native/binding';
import { RecordBatch } from './batch';
import { fromNativeError, PsampleSocketError } from './errors';
import { nativeReaderOptions } from './options';
import { STAT, statsObject, statValues } from './stats';
import type { OpenPsampleOptions, PsampleDropEvent, PsampleMessage, PsampleStats } from './types';

// Samples an async iterator may hold before the socket stops taking from the reader thread;
// beyond that the native queue fills and then counts drops, rather than memory growing unbounded.
const ITERATOR_HIGH_WATER = 65_536;
const ITERATOR_LOW_WATER = 16_384;

const asyncDispose: typeof Symbol.asyncDispose =
  Symbol.asyncDispose ?? (Symbol.for('nodejs.asyncDispose') as typeof Symbol.asyncDispose);

interface Waiter {
  resolve(result: IteratorResult<PsampleMessage>): void;
  reject(error: unknown): void;
}

class SampleIterator implements AsyncIterableIterator<PsampleMessage> {
  readonly buffer: PsampleMessage[] = [];
  head = 0;
  waiter: Waiter | undefined;
  done = false;
  failure: unknown;

  constructor(private readonly owner: PsampleSocket) {}

  get pending(): number {
    return this.buffer.length - this.head;
  }

  push(message: PsampleMessage): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve({ value: message, done: false });
    } else {
      this.buffer.push(message);
    }
  }

  finish(failure?: unknown): void {
    this.done = true;
    this.failure = failure;
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter && failure !== undefined) waiter.reject(failure);
    else waiter?.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<PsampleMessage>> {
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
      return this.failure !== undefined
        ? Promise.reject(this.failure)
        : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<PsampleMessage>> {
    this.owner.detach(this);
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

export interface PsampleSocketEvents {
  sample: [PsampleMessage];
  group: [PsampleMessage];
  drop: [PsampleDropEvent];
  error: [Error];
  close: [];
}

/**
 * A live psample subscription. A dedicated native thread keeps draining the kernel socket into a
 * bounded queue while JavaScript is busy; this object turns the queued batches into
 * PsampleMessage objects on the JavaScript thread.
 *
 * Backpressure: while any async iterator holds more than 65,536 unread samples, delivery pauses
 * for everyone (listeners included), the native queue fills and then counts drops. An iterator
 * that is no longer read must be ended (break / return()) so it does not hold the others back.
 */
export class PsampleSocket extends EventEmitter<PsampleSocketEvents> implements AsyncIterable<PsampleMessage> {
  /** The netlink family id the messages carry (psample's, resolved at open). */
  readonly familyId: number;
  /** The multicast group joined for samples. */
  readonly groupId: number;
  /** The kernel's receive buffer size actually granted (it counts skb overhead, so about 2x the request). */
  readonly receiveBufferBytes: number;
  /** False when the group filter could not be attached in the kernel and runs in userspace. */
  readonly kernelFilter: boolean;

  readonly #native: NativeReader;
  readonly #iterators = new Set<SampleIterator>();
  readonly #signal: AbortSignal | undefined;
  #closed = false;
  #paused = false;
  #received = 0;
  #kernelDrops = 0;
  #queueDrops = 0;
  // Filled by take() and stats(), in STAT order.
  readonly #stats = statValues();

  constructor(options: OpenPsampleOptions = {}) {
    super();
    const native = nativeReaderOptions(options);
    try {
      this.#native = new addon.NativeReader(native, this.#onReadable);
    } catch (error) {
      throw fromNativeError(error);
    }
    const info = this.#native.info();
    this.familyId = info.familyId;
    this.groupId = info.groupId;
    this.receiveBufferBytes = info.receiveBufferBytes;
    this.kernelFilter = info.kernelFilter;
    this.#signal = options.signal;
    if (this.#signal?.aborted) this.close();
    else this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get closed(): boolean {
    return this.#closed;
  }

  stats(): PsampleStats {
    this.#native.stats(this.#stats);
    this.#stats[STAT.received] = this.#received;
    return statsObject(this.#stats);
  }

  /** Keeps the process alive while open (the default), like a listening server. */
  ref(): this {
    if (!this.#closed) this.#native.ref();
    return this;
  }

  /** Lets the process exit, and garbage collection close the socket, when nothing else holds it. */
  unref(): this {
    if (!this.#closed) this.#native.unref();
    return this;
  }

  close(): void {
    this.#close(undefined);
  }

  // Whatever the reader thread already queued is delivered, to listeners and iterators alike,
  // before the iterators end (with the failure, if any).
  #close(failure: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#deliver(this.#native.take(this.#stats));
    this.#reportDrops();
    this.#native.close();
    const iterators = [...this.#iterators];
    this.#iterators.clear();
    for (const iterator of iterators) iterator.finish(failure);
    this.emit('close');
    if (failure !== undefined) {
      if (this.listenerCount('error') > 0) this.emit('error', failure);
      else if (iterators.length === 0) throw failure;
    }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<PsampleMessage> {
    const iterator = new SampleIterator(this);
    if (this.#closed) iterator.finish();
    else this.#iterators.add(iterator);
    return iterator;
  }

  async [asyncDispose](): Promise<void> {
    this.close();
  }

  /** @internal */
  detach(iterator: SampleIterator): void {
    this.#iterators.delete(iterator);
    this.iteratorDrained();
  }

  /** @internal */
  iteratorDrained(): void {
    if (!this.#paused) return;
    for (const iterator of this.#iterators) if (iterator.pending > ITERATOR_LOW_WATER) return;
    this.#paused = false;
    setImmediate(this.#onReadable);
  }

  readonly #onAbort = (): void => this.close();

  // Called by the reader thread (through a thread-safe function) when batches wait.
  readonly #onReadable = (): void => {
    if (this.#closed || this.#paused) return;
    this.#deliver(this.#native.take(this.#stats));
    this.#reportDrops();
    const failure = this.#stats[STAT.failureErrno]!;
    if (failure !== 0) this.#fail(failure);
  };

  #deliver(batches: NativeBatches): void {
    for (let i = 0; i < batches.length; i += 3) {
      const batch = new RecordBatch(batches[i] as ArrayBuffer, batches[i + 1] as ArrayBuffer, batches[i + 2] as number, NATIVE_LITTLE_ENDIAN);
      for (let index = 0; index < batch.count; index++) this.#dispatch(batch.message(index));
    }
    for (const iterator of this.#iterators) {
      if (iterator.pending > ITERATOR_HIGH_WATER) this.#paused = true;
    }
  }

  readonly #dispatch = (message: PsampleMessage): void => {
    this.#received++;
    if (message.command === 'sample') this.emit('sample', message);
    else this.emit('group', message);
    for (const iterator of this.#iterators) iterator.push(message);
  };

  #reportDrops(): void {
    const kernelDrops = this.#stats[STAT.kernelDrops]!;
    const queueDrops = this.#stats[STAT.queueDrops]!;
    if (kernelDrops !== this.#kernelDrops) {
      const count = kernelDrops - this.#kernelDrops;
      this.#kernelDrops = kernelDrops;
      this.emit('drop', { kind: 'kernel', count, total: kernelDrops });
    }
    if (queueDrops !== this.#queueDrops) {
      const count = queueDrops - this.#queueDrops;
      this.#queueDrops = queueDrops;
      this.emit('drop', { kind: 'queue', count, total: queueDrops });
    }
  }

  #fail(errnum: number): void {
    const name = Object.entries(os.constants.errno).find(([, n]) => n === errnum)?.[0] ?? `errno ${errnum}`;
    const error = new PsampleSocketError(
      'SOCKET_ERROR',
      `the psample socket failed (${name}) and was closed: open a new socket to continue`,
    );
    this.#close(error);
  }
}

/** Opens a psample subscription (synchronously: errors are thrown here, typed). */
export function openPsample(options: OpenPsampleOptions = {}): PsampleSocket {
  return new PsampleSocket(options);
}

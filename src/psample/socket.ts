import { EventEmitter } from 'node:events';
import os from 'node:os';

import { addon, type NativeFlowTable, type NativeReader, type NativeReaderInfo, type NativeReaderOptions } from '../native/binding';
import type { PsampleBatch } from './batch';
import { DeliveryQueue } from './delivery';
import { fromNativeError, InvalidOptionError, PsamplePermissionError, PsampleSocketError } from './errors';
import { FakePsampleReader } from './fake-reader';
import { SampleIterators } from './iterator';
import { nativeReaderOptions } from './options';
import { dropPrivileges, privilegeRequest } from './privileges';
import type { PsampleSample } from './sample';
import { STAT, statsObject, statValues } from './stats';
import type { OpenPsampleOptions, PrivilegeDropReport, PsampleDropEvent, PsampleGapEvent, PsampleStats } from './types';

// One turn of the event loop delivers for about this long at most, then yields and goes on at
// the next: a backlog (a burst the listeners could not keep up with) must not keep signals,
// timers and I/O waiting until all of it is delivered.
const TURN_BUDGET_MS = 10;

const DROP_KINDS = [
  ['kernel', STAT.kernelDrops],
  ['queue', STAT.queueDrops],
  ['close', STAT.closeDiscards],
] as const;

const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for('nodejs.asyncDispose') as typeof Symbol.asyncDispose);

export interface PsampleSocketEvents {
  /** Every message of one hand-off from the reader thread, before they are emitted one by one. */
  batch: [PsampleBatch];
  sample: [PsampleSample];
  group: [PsampleSample];
  drop: [PsampleDropEvent];
  gap: [PsampleGapEvent];
  error: [Error];
  close: [];
}

/**
 * A live psample subscription. A dedicated native thread keeps draining the kernel socket into a
 * bounded queue while JavaScript is busy, and hands over what arrived within one delivery
 * interval (1 ms at high rates, up to 10 ms at low ones) as one batch; this object delivers the
 * batches (`batch`) and their messages (`sample`, `group`, the async iterator) on the JavaScript
 * thread, as PsampleSamples that decode fields on access, about 10 ms of listener work per turn
 * of the event loop.
 *
 * Backpressure: while any async iterator holds more than 65,536 unread samples, delivery pauses
 * for everyone (listeners included), the native queue fills and then counts drops. An iterator
 * that is no longer read must be ended (break / return()) so it does not hold the others back.
 */
export class PsampleSocket extends EventEmitter<PsampleSocketEvents> implements AsyncIterable<PsampleSample> {
  /** The kernel's receive buffer size actually granted (it counts skb overhead, so about 2x the request). */
  readonly receiveBufferBytes: number;
  /** False when the group filter could not be attached in the kernel and runs in userspace. */
  readonly kernelFilter: boolean;
  /** With dropPrivileges: what the process gave up, once the socket had joined. */
  readonly privileges: PrivilegeDropReport | undefined;

  readonly #native: NativeReader;
  readonly #deliveries = new DeliveryQueue();
  // Paused by them, the socket stops taking from the reader thread: its bounded queue fills and
  // then counts drops, rather than memory growing unbounded.
  readonly #iterators = new SampleIterators<PsampleSample>(() => this.#resume());
  readonly #signal: AbortSignal | undefined;
  #info: NativeReaderInfo;
  #closed = false;
  #resumeScheduled = false;
  #received = 0;
  // Filled by take() and stats(); #reported holds the totals the events have announced.
  readonly #stats = statValues();
  readonly #reported = statValues();

  /** @internal `reader`: what stands in for the addon's reader thread (openFakePsample()). */
  constructor(options: OpenPsampleOptions = {}, reader?: (options: NativeReaderOptions, onReadable: () => void) => NativeReader) {
    super();
    const native = nativeReaderOptions(options);
    const privileges = privilegeRequest(options.dropPrivileges);
    if (reader !== undefined && privileges !== undefined) {
      throw new InvalidOptionError('dropPrivileges: a fake reader has no socket to give privileges up for');
    }
    try {
      this.#native = reader === undefined ? new addon.NativeReader(native, this.#onReadable) : reader(native, this.#onReadable);
    } catch (error) {
      throw fromNativeError(error);
    }
    try {
      this.privileges = privileges && dropPrivileges(privileges);
    } catch (error) {
      this.#native.close(0);
      throw error;
    }
    this.#info = this.#native.info();
    this.receiveBufferBytes = this.#info.receiveBufferBytes;
    this.kernelFilter = this.#info.kernelFilter;
    this.#signal = options.signal;
    if (this.#signal?.aborted) this.close();
    else this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The netlink family id the messages carry (psample's: it may change when psample registers again). */
  get familyId(): number {
    return this.#info.familyId;
  }

  /** The multicast group joined for samples (it may change when psample registers again). */
  get groupId(): number {
    return this.#info.groupId;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Every count (see PsampleStats); still readable after close, when they are final. */
  stats(): PsampleStats {
    this.#native.stats(this.#stats);
    // The reader thread counts what it added to a fed flow table; JavaScript what it delivered.
    this.#stats[STAT.received] = this.#stats[STAT.received]! + this.#received;
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

  /**
   * @internal watch --aggregate's native flows: from the reader thread's next hand-off on, its
   * batches go to `table` on that thread, counted as received there, and no `batch` or `sample`
   * event follows (but for batches already handed over); drops, gaps and errors are reported as before.
   */
  feed(table: NativeFlowTable): void {
    if (!this.#closed) this.#native.feed(table);
  }

  /**
   * Stops at once: no `batch`, `sample` or `group` event follows, even when called from a listener.
   * The reader thread is stopped first; what it had read but JavaScript had not delivered, and
   * what the socket still held, is counted in stats().closeDiscards (and a `drop` event of kind
   * 'close'), then `close` is emitted.
   */
  close(): void {
    this.#close(undefined);
  }

  #close(failure: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#native.close(this.#deliveries.discard());
    this.#native.stats(this.#stats);
    const iterators = this.#iterators.finishAll(failure);
    this.#reportDrops();
    this.emit('close');
    if (failure !== undefined) {
      if (this.listenerCount('error') > 0) this.emit('error', failure);
      else if (iterators === 0) throw failure;
    }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<PsampleSample> {
    return this.#iterators.open(this.#closed);
  }

  [asyncDispose](): Promise<void> {
    this.close();
    return Promise.resolve();
  }

  readonly #onAbort = (): void => this.close();

  // Called by the reader thread (through a thread-safe function) when batches or new counts
  // wait, and on a later turn of the event loop when some of what was taken is not delivered
  // yet (the turn's budget ran out, or a listener threw). What was taken is delivered before more
  // is taken, so a backlog waits in the reader's bounded queue, not in JavaScript's memory.
  readonly #onReadable = (): void => {
    if (this.#closed || this.#iterators.paused) return;
    const takes = this.#deliveries.batch === undefined;
    if (takes) this.#deliveries.add(this.#native.take(this.#stats));
    this.#deliver();
    if (this.#closed) return;
    const failure = this.#stats[STAT.failureErrno]!;
    if (failure !== 0) return this.#fail(failure);
    this.#reportDrops();
    this.#reportGaps();
    this.#iterators.checkBacklog();
    // Without a take() the reader thread's notification stays spent: the next turn takes.
    if (this.#deliveries.batch !== undefined || !takes) this.#resume();
  };

  // The rest on the next turn of the event loop (once, however many ask).
  #resume(): void {
    if (this.#resumeScheduled) return;
    this.#resumeScheduled = true;
    setImmediate(() => {
      this.#resumeScheduled = false;
      this.#onReadable();
    });
  }

  // An exception in a listener goes where Node sends one from any event source: the addon
  // raises it as 'uncaughtException' (see CallJs in native/napi/addon.cc). If the process survives
  // it, the rest of the batch follows on the next turn of the event loop, in order.
  #deliver(): void {
    const deliveries = this.#deliveries;
    const deadline = performance.now() + TURN_BUDGET_MS;
    try {
      for (let batch = deliveries.batch; batch !== undefined; batch = deliveries.batch) {
        if (performance.now() > deadline) return;
        if (!deliveries.announced && this.listenerCount('batch') > 0) {
          // Counted before the listener runs: a listener that throws or closes the socket had them.
          deliveries.announced = true;
          this.#received += deliveries.remaining;
          this.emit('batch', batch);
          if (this.#closed) return;
        }
        if (this.#iterators.size === 0 && this.listenerCount('sample') === 0 && this.listenerCount('group') === 0) {
          // Nobody takes them one by one: the samples need not exist.
          const counted = deliveries.announced;
          const undelivered = deliveries.endBatch();
          if (!counted) this.#received += undelivered;
          continue;
        }
        const counted = deliveries.announced;
        for (let sample = deliveries.next(); sample !== undefined; sample = deliveries.next()) {
          this.#dispatch(sample, counted);
          if (this.#closed) return;
        }
        deliveries.endBatch();
      }
    } catch (error) {
      if (!this.#closed) this.#resume();
      throw error;
    }
  }

  // Iterators first: a listener that throws must not take the message from them.
  #dispatch(sample: PsampleSample, counted: boolean): void {
    if (!counted) this.#received++;
    this.#iterators.push(sample);
    if (sample.command === 'sample') this.emit('sample', sample);
    else this.emit('group', sample);
  }

  #reportDrops(): void {
    for (const [kind, stat] of DROP_KINDS) {
      const total = this.#stats[stat]!;
      const count = total - this.#reported[stat]!;
      if (count === 0) continue;
      this.#reported[stat] = total;
      this.emit('drop', { kind, count, total });
    }
  }

  #reportGaps(): void {
    const gaps = this.#stats[STAT.familyGaps]!;
    const rejoins = this.#stats[STAT.rejoins]!;
    if (gaps !== this.#reported[STAT.familyGaps]) {
      this.#reported[STAT.familyGaps] = gaps;
      this.emit('gap', { phase: 'start', total: gaps });
    }
    if (rejoins !== this.#reported[STAT.rejoins]) {
      this.#reported[STAT.rejoins] = rejoins;
      this.#info = this.#native.info();
      const { familyId, groupId, lastGapMs } = this.#info;
      this.emit('gap', { phase: 'end', total: gaps, familyId, groupId, durationMs: lastGapMs });
    }
  }

  #fail(errnum: number): void {
    const name = Object.entries(os.constants.errno).find(([, n]) => n === errnum)?.[0] ?? `errno ${errnum}`;
    // The reader thread meets EPERM only when it rejoins a re-registered family.
    if (errnum === os.constants.errno.EPERM) {
      const gaveUp = this.privileges === undefined ? 'which this process no longer has' : 'which this process gave up (dropPrivileges)';
      return this.#close(
        new PsamplePermissionError(
          'PSAMPLE_PERMISSION',
          `the psample family registered again (module reload, Open vSwitch upgrade) and rejoining its packets group needs CAP_NET_ADMIN, ${gaveUp}: ` +
            'the socket is closed; start the process again (a service manager does: Restart=on-failure)',
        ),
      );
    }
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

/**
 * A PsampleSocket fed by a FakePsampleReader instead of the kernel, for tests of what consumes
 * samples (without root): `reader.deliver(messages)` hands it what the reader thread would.
 * Takes openPsample()'s options but `source`, `netns` and `dropPrivileges`, which need a real socket.
 */
export function openFakePsample(options: Omit<OpenPsampleOptions, 'source' | 'netns' | 'dropPrivileges'> = {}): {
  socket: PsampleSocket;
  reader: FakePsampleReader;
} {
  let reader: FakePsampleReader | undefined;
  const socket = new PsampleSocket(options, (native, onReadable) => (reader = new FakePsampleReader(native, onReadable)));
  return { socket, reader: reader! };
}

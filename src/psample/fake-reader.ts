import {
  addon,
  type NativeBatches,
  type NativeFlowTable,
  type NativeReader,
  type NativeReaderInfo,
  type NativeReaderOptions,
} from '../native/binding';
import { encodePsample } from './encode';
import { STAT, statValues } from './stats';
import type { PsampleMessage } from './types';

/** The psample family id the fake's messages carry (any id a real family could have). */
const FAKE_FAMILY_ID = 0x1c;
/** The reader thread's batches hold about this much: one hand-off's buffer. */
const BATCH_BYTES = 64 * 1024;

/**
 * A stand-in for the addon's reader thread (native/socket/reader.h), for tests of whatever
 * consumes a PsampleSocket: fast, and without root, a socket or a thread. The messages given to
 * deliver() are encoded as psample netlink messages and parsed by the addon's own parser into the
 * same batch records the reader thread writes, queued up to the reader's queue capacity (the rest
 * counted as queue drops, as the reader counts them), and announced to the socket as the reader
 * thread announces them: on a later turn of the event loop, once until the socket takes them.
 * What the socket takes, counts and discards at close is then exactly what it does with the real
 * reader. What it cannot stand in for: the kernel (its receive buffer, its group filter, family
 * reloads), which the *.kernel and *.lab tests keep covering.
 */
export class FakePsampleReader implements NativeReader {
  readonly #options: NativeReaderOptions;
  readonly #onReadable: () => void;
  readonly #stats = statValues();
  #batches: NativeBatches = [];
  #table: NativeFlowTable | undefined;
  #announced = false;
  #closed = false;

  /** @internal PsampleSocket makes it, as it makes the addon's reader. */
  constructor(options: NativeReaderOptions, onReadable: () => void) {
    this.#options = options;
    this.#onReadable = onReadable;
  }

  /** Whether the socket closed it. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Queues `messages` as the reader thread would after one read: parsed into batches of about 64
   * KiB, those of groups the socket does not keep counted as filtered out, those beyond the
   * queue's room counted as queue drops. The socket hears of them on a later turn.
   */
  deliver(messages: readonly Partial<PsampleMessage>[]): void {
    if (this.#closed) return;
    const groups = this.#options.groups;
    // A fed table takes what is queued first, and has no queue of its own to run out of room.
    if (this.#table !== undefined) this.#handBacklog(this.#table);
    let room = this.#table !== undefined ? Infinity : this.#options.queueCapacity - this.#stats[STAT.queued]!;
    let datagram: Uint8Array[] = [];
    let bytes = 0;
    const flush = (): void => {
      if (datagram.length === 0) return;
      const parsed = statValues();
      const [buffer, count] = addon.decode(Buffer.concat(datagram), FAKE_FAMILY_ID, parsed);
      for (const stat of [STAT.malformed, STAT.unknownAttributes, STAT.foreign, STAT.controlMessages]) {
        this.#stats[stat] = this.#stats[stat]! + parsed[stat]!;
      }
      if (this.#table !== undefined) {
        this.#hand(this.#table, buffer, count);
      } else {
        this.#batches.push(buffer, count);
        this.#stats[STAT.queued] = this.#stats[STAT.queued]! + count;
      }
      datagram = [];
      bytes = 0;
    };
    for (const message of messages) {
      this.#stats[STAT.datagrams]!++;
      if (groups !== undefined && groups.length > 0 && !groups.includes(message.group ?? 0)) {
        this.#stats[STAT.filteredOut]!++;
        continue;
      }
      if (room === 0) {
        this.#stats[STAT.queueDrops]!++;
        continue;
      }
      room--;
      const encoded = encodePsample(message, { familyId: FAKE_FAMILY_ID });
      if (bytes + encoded.length > BATCH_BYTES) flush();
      datagram.push(encoded);
      bytes += encoded.length;
    }
    flush();
    this.#announce();
  }

  /** Counts messages the kernel dropped because the receive buffer was full; the socket reports them at its next take. */
  dropInKernel(count: number): void {
    this.#stats[STAT.kernelDrops] = this.#stats[STAT.kernelDrops]! + count;
    this.#announce();
  }

  /** The reader thread met an error it cannot go on after (errno): the socket fails and closes. */
  fail(errno: number): void {
    this.#stats[STAT.failureErrno] = errno;
    this.#announce();
  }

  take(stats: Float64Array): NativeBatches {
    const batches = this.#batches;
    this.#batches = [];
    this.#announced = false;
    this.#stats[STAT.queued] = 0;
    this.stats(stats);
    return batches;
  }

  feed(table: NativeFlowTable): void {
    this.#table = table;
  }

  stats(out: Float64Array): void {
    out.set(this.#stats);
  }

  info(): NativeReaderInfo {
    return { familyId: FAKE_FAMILY_ID, groupId: 1, kernelFilter: true, receiveBufferBytes: this.#options.receiveBufferBytes };
  }

  close(undelivered: number): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stats[STAT.closeDiscards] = this.#stats[STAT.closeDiscards]! + this.#stats[STAT.queued]! + undelivered;
    this.#stats[STAT.queued] = 0;
    this.#batches = [];
  }

  ref(): void {}

  unref(): void {}

  // As the reader thread hands a fed table its batches: added where read, counted as received (a
  // table closed meanwhile refuses them: discarded at close).
  #hand(table: NativeFlowTable, buffer: ArrayBuffer, count: number): void {
    const taken = !table.closed;
    if (taken) table.add(buffer, count, addon.abi.littleEndian);
    const stat = taken ? STAT.received : STAT.closeDiscards;
    this.#stats[stat] = this.#stats[stat]! + count;
  }

  #handBacklog(table: NativeFlowTable): void {
    const batches = this.#batches;
    this.#batches = [];
    this.#stats[STAT.queued] = 0;
    for (let i = 0; i < batches.length; i += 2) this.#hand(table, batches[i] as ArrayBuffer, batches[i + 1] as number);
  }

  // As the reader thread's thread-safe function: one call on a later turn until the socket takes.
  #announce(): void {
    if (this.#announced || this.#closed) return;
    this.#announced = true;
    setImmediate(() => {
      if (!this.#closed) this.#onReadable();
    });
  }
}

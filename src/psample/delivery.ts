import { NATIVE_LITTLE_ENDIAN, type NativeBatches } from '../native/binding';
import { PsampleBatch } from './batch';
import type { PsampleSample } from './sample';

/**
 * The batches taken from the reader thread and not delivered yet, handed out one at a time and
 * their messages one at a time, in order. A message leaves the queue before it is dispatched, so
 * when a listener throws or closes the socket, what remains is exactly what was not delivered.
 */
export class DeliveryQueue {
  readonly #batches: PsampleBatch[] = [];
  // The next message of #batches[0]: its index and where its record starts.
  #index = 0;
  #offset = 0;
  /** Whether #batches[0] was handed to `batch` listeners (and its messages counted as delivered then). */
  announced = false;

  add(batches: NativeBatches): void {
    for (let i = 0; i < batches.length; i += 2) {
      const count = batches[i + 1] as number;
      if (count > 0) this.#batches.push(new PsampleBatch(batches[i] as ArrayBuffer, count, NATIVE_LITTLE_ENDIAN));
    }
  }

  /** The batch the next message belongs to. */
  get batch(): PsampleBatch | undefined {
    return this.#batches[0];
  }

  /** Messages of the current batch not handed out yet. */
  get remaining(): number {
    const batch = this.#batches[0];
    return batch === undefined ? 0 : batch.length - this.#index;
  }

  /** The next message of the current batch; undefined at its end (call endBatch()). */
  next(): PsampleSample | undefined {
    const batch = this.#batches[0];
    if (batch === undefined || this.#index === batch.length) return undefined;
    const sample = batch.sampleAt(this.#offset);
    this.#index++;
    if (this.#index < batch.length) this.#offset = batch.nextOffset(this.#offset);
    return sample;
  }

  /** Moves on to the next batch; returns how many messages of this one were not handed out. */
  endBatch(): number {
    const skipped = this.remaining;
    this.#batches.shift();
    this.#index = 0;
    this.#offset = 0;
    this.announced = false;
    return skipped;
  }

  /** Empties the queue; returns how many messages it held that were not delivered, announced ones excepted. */
  discard(): number {
    let count = this.announced ? 0 : this.remaining;
    for (let i = 1; i < this.#batches.length; i++) count += this.#batches[i]!.length;
    this.#batches.length = 0;
    this.#index = 0;
    this.#offset = 0;
    this.announced = false;
    return count;
  }
}

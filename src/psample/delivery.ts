import { NATIVE_LITTLE_ENDIAN, type NativeBatches } from '../native/binding';
import { RecordBatch } from './batch';
import type { PsampleMessage } from './types';

/**
 * The batches taken from the reader thread and not delivered yet, handed out one message at a
 * time, in order. A message leaves the queue before it is dispatched, so when a listener throws
 * or closes the socket, what remains is exactly what was not delivered.
 */
export class DeliveryQueue {
  readonly #batches: RecordBatch[] = [];
  // Index of the next message of #batches[0].
  #head = 0;

  add(batches: NativeBatches): void {
    for (let i = 0; i < batches.length; i += 3) {
      const count = batches[i + 2] as number;
      if (count > 0) {
        this.#batches.push(new RecordBatch(batches[i] as ArrayBuffer, batches[i + 1] as ArrayBuffer, count, NATIVE_LITTLE_ENDIAN));
      }
    }
  }

  next(): PsampleMessage | undefined {
    const batch = this.#batches[0];
    if (batch === undefined) return undefined;
    const message = batch.message(this.#head++);
    if (this.#head === batch.count) {
      this.#batches.shift();
      this.#head = 0;
    }
    return message;
  }

  /** Empties the queue; returns how many messages it held. */
  discard(): number {
    let count = -this.#head;
    for (const batch of this.#batches) count += batch.count;
    this.#batches.length = 0;
    this.#head = 0;
    return count;
  }
}

import type { IpfixSample } from './types';

/** The records one turn of the event loop brought, in the order they arrived. */
export class IpfixBatch implements Iterable<IpfixSample> {
  readonly #samples: readonly IpfixSample[];

  /** @internal */
  constructor(samples: readonly IpfixSample[]) {
    this.#samples = samples;
  }

  get length(): number {
    return this.#samples.length;
  }

  /** The record at `index` (negative counts from the end), as Array.prototype.at(). */
  at(index: number): IpfixSample | undefined {
    return this.#samples.at(index);
  }

  [Symbol.iterator](): Iterator<IpfixSample> {
    return this.#samples[Symbol.iterator]();
  }
}

import type { VerdictStep } from './network-event';
import type { Verdict } from './verdict';

/**
 * A verdict chain made once and shared by every packet that takes the same way: its steps never
 * change, so whatever is worked out from it (its sentence, its JSON, its columns) can be kept
 * with it (output formatters key caches on `steps`).
 */
export class VerdictChain {
  readonly steps: readonly VerdictStep[];
  /** The packet's verdict: its last step's (unknown for a chain without steps). */
  readonly verdict: Verdict;
  /** Where a sample with a key leads from here. */
  readonly #next = new Map<object, VerdictChain>();

  /** @internal */
  constructor(steps: readonly VerdictStep[]) {
    this.steps = steps;
    this.verdict = steps.length === 0 ? 'unknown' : steps[steps.length - 1]!.verdict;
  }

  /** @internal */
  follow(key: object, chains: VerdictChains): VerdictChain {
    let next = this.#next.get(key);
    if (next === undefined) {
      const step = chains.step(key);
      const cookie = step.cookie;
      const repeat =
        cookie === undefined
          ? -1
          : this.steps.findIndex((s) => s.cookie?.obsDomainId === cookie.obsDomainId && s.cookie.obsPointId === cookie.obsPointId);
      if (repeat < 0) {
        next = new VerdictChain(Object.freeze([...this.steps, Object.freeze({ ...step, samples: 1 })]));
      } else {
        // The same cookie again (OVN samples some stages twice): one step, counted, as its first sample said.
        const steps = [...this.steps];
        steps[repeat] = Object.freeze({ ...steps[repeat]!, samples: steps[repeat]!.samples + 1 });
        next = new VerdictChain(Object.freeze(steps));
      }
      this.#next.set(key, next);
      chains.made();
    }
    return next;
  }
}

/** Chains kept before they start over: cookies that are never the same twice must not grow them without end. */
const MAX_CHAINS = 16_384;

/**
 * The verdict chains of an assembler, as a tree from the empty chain: a packet's samples walk it
 * one step per sample, each step keyed by what the sample says (the decoder's event, which it
 * hands out once per cookie, or the cookie itself without a decoder), so a packet costs a map
 * lookup per sample and makes nothing once its way was seen.
 */
export class VerdictChains {
  #root = new VerdictChain(Object.freeze([]));
  #size = 0;

  /**
   * `step`: the step of a sample whose key is `key` (the same key always makes the same step); a
   * step with a cookie already in the chain counts one more sample there instead.
   */
  constructor(readonly step: (key: object) => Omit<VerdictStep, 'samples'>) {}

  /** @internal */
  made(): void {
    this.#size++;
  }

  get empty(): VerdictChain {
    if (this.#size > MAX_CHAINS) this.clear();
    return this.#root;
  }

  /** The chain `chain` becomes with one more sample whose step is keyed by `key`. */
  next(chain: VerdictChain, key: object): VerdictChain {
    return chain.follow(key, this);
  }

  /** Starts over: the keys changed meaning (the decoder's answers did). */
  clear(): void {
    this.#root = new VerdictChain(Object.freeze([]));
    this.#size = 0;
  }
}

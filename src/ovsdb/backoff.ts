export interface BackoffOptions {
  /** First delay after every remote failed once. Default 250 ms. */
  readonly initialMs?: number;
  /** Ceiling of the delay. Default 8000 ms (ovsdb-server clients use 8 s too). */
  readonly maxMs?: number;
  readonly factor?: number;
  /** Fraction of each delay drawn at random, so many clients do not reconnect in lock-step. Default 0.5. */
  readonly jitter?: number;
}

/** Exponential backoff with jitter between rounds of reconnection attempts. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 250;
    this.maxMs = options.maxMs ?? 8000;
    this.factor = options.factor ?? 2;
    this.jitter = Math.min(Math.max(options.jitter ?? 0.5, 0), 1);
  }

  /** The next delay: base * factor^n capped at maxMs, of which a `jitter` fraction is random. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt++;
    return Math.round(base * (1 - this.jitter) + base * this.jitter * Math.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}

import { atLeast } from './option-range';

export interface BackoffOptions {
  /**
   * First delay after every remote failed once, and the delay before reconnecting after a stable
   * session ended (a server restart drops all its clients at once); at least 1. Default 1000 ms,
   * the OVS reconnect FSM's minimum backoff.
   */
  readonly initialMs?: number;
  /** Ceiling of the delay; at least 1. Default 8000 ms (ovsdb-server clients use 8 s too). */
  readonly maxMs?: number;
  /** Growth of the delay per failed round; at least 1 (1: constant delay). Default 2. */
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

  /** Throws OvsdbOptionError for a value that would make reconnection spin or never grow. */
  constructor(options: BackoffOptions = {}) {
    this.initialMs = atLeast('backoff.initialMs', options.initialMs ?? 1000, 1);
    this.maxMs = atLeast('backoff.maxMs', options.maxMs ?? 8000, 1);
    this.factor = atLeast('backoff.factor', options.factor ?? 2, 1);
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

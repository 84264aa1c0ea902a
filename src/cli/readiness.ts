import type { Logger } from 'pino';

/** Why a watch is not ready now; empty when it is. */
export type NotReadyReasons = () => readonly string[];

export interface ReadinessState {
  readonly ready: boolean;
  /** Why not, when not ready. */
  readonly reasons: readonly string[];
}

/** How often readiness is looked at for the log: a change is logged within this long. */
const LOG_INTERVAL_MS = 1000;

/**
 * Whether a watch is ready (socket joined, databases synced, collector set in place), as /readyz
 * answers it, with each change logged ("ready" / "not ready: why"), and at exit what it was.
 */
export class Readiness {
  private readonly reasons: NotReadyReasons;
  private readonly log: Logger;
  private last: string | undefined;
  private everReady = false;
  private readonly timer: NodeJS.Timeout;

  constructor(reasons: NotReadyReasons, log: Logger) {
    this.reasons = reasons;
    this.log = log;
    this.timer = setInterval(() => this.check(), LOG_INTERVAL_MS).unref();
  }

  state(): ReadinessState {
    const reasons = this.reasons();
    return { ready: reasons.length === 0, reasons };
  }

  /** Logs a change of readiness since the last look. */
  check(): ReadinessState {
    const state = this.state();
    const text = state.reasons.join('; ');
    if (text !== this.last) {
      if (state.ready) this.log.info({ ready: true }, 'ready');
      // Starting up is not worth a warning: it is expected, and the first answer comes within a second.
      else this.log[this.last === undefined ? 'info' : 'warn']({ ready: false, reasons: state.reasons }, `not ready: ${text}`);
      this.last = text;
    }
    this.everReady ||= state.ready;
    return state;
  }

  /** For the exit summary: whether it was ready at exit, and if not, why (and whether it ever was); `text` is empty when ready. */
  summary(): { fields: { ready: boolean; everReady: boolean; notReady?: readonly string[] }; text: string } {
    const state = this.check();
    clearInterval(this.timer);
    if (state.ready) return { fields: { ready: true, everReady: true }, text: '' };
    return {
      fields: { ready: false, everReady: this.everReady, notReady: state.reasons },
      text: `${this.everReady ? 'not ready at exit' : 'never ready'}: ${state.reasons.join('; ')}`,
    };
  }

  close(): void {
    clearInterval(this.timer);
  }
}

import { OvnPsampleError } from '../errors';

/** Wrong command-line use: the message says what to type instead. */
export class CliUsageError extends OvnPsampleError {
  constructor(message: string) {
    super('CLI_USAGE', message);
  }
}

/** The metrics server could not listen (port taken, or below 1024 without the right), before the watch changed anything. */
export class MetricsListenError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('METRICS_LISTEN', message, options);
  }
}

import { OvnPsampleError } from '../errors';

/** Wrong command-line use: the message says what to type instead. */
export class CliUsageError extends OvnPsampleError {
  constructor(message: string) {
    super('CLI_USAGE', message);
  }
}

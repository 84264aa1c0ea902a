import type { Logger } from 'pino';

let commandLogger: Logger | undefined;

/** The running command's logger, so a failure that ends the command is logged the way the command logs. */
export function setCommandLogger(logger: Logger): void {
  commandLogger = logger;
}

export function currentCommandLogger(): Logger | undefined {
  return commandLogger;
}

import type { Command } from 'commander';
import type { Logger } from 'pino';
import { createLogger } from './log';
import { addLogOptions, parseLogLevel, type LogFlags } from './options';

let commandLogger: Logger | undefined;

/** The running command's logger, so a failure that ends the command is logged the way the command logs. */
export function currentCommandLogger(): Logger | undefined {
  return commandLogger;
}

/**
 * Every command's skeleton: its log options, then its action with the one logger made from them
 * before anything else happens. `run` checks every other option before it opens anything.
 */
export function defineCommand<Flags extends LogFlags>(command: Command, run: (flags: Flags, log: Logger) => Promise<void>): Command {
  addLogOptions(command);
  return command.action(async (flags: Flags) => {
    const log = createLogger({
      level: parseLogLevel(flags.logLevel),
      ...(flags.logFormat === undefined ? {} : { format: flags.logFormat }),
    });
    commandLogger = log;
    await run(flags, log);
  });
}

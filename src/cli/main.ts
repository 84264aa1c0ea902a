#!/usr/bin/env -S node --max-semi-space-size=4
// Why the small young generation: a watch holds each packet for its group window (50 ms), so at
// high rates V8 grows each semi-space to its 16 MB default and keeps it. Capped at 4 MB, the lab's
// watch at 30,000 samples/s peaks at 108-112 MB instead of 126-129, at the same CPU per sample
// (scripts/lab/README.md). `env -S` is coreutils ≥ 8.30's; the image ships that env.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { OvnPsampleError } from '../errors';
import { currentCommandLogger } from './command';
import { collectorCommand } from './commands/collector';
import { decodeCommand } from './commands/decode';
import { listenCommand } from './commands/listen';
import { topCommand } from './commands/top';
import { watchCommand } from './commands/watch';

const program = new Command('ovn-psample')
  .description('Which OVN ACL and which Kubernetes network policy allowed or dropped a packet, from kernel psample samples')
  .version((JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version)
  .addCommand(watchCommand())
  .addCommand(topCommand())
  .addCommand(collectorCommand())
  .addCommand(decodeCommand())
  .addCommand(listenCommand());

/**
 * commander has printed its own message for a wrong flag or argument by the time this runs;
 * such mistakes exit 2, like every usage error, and --help / --version exit 0.
 */
function usageExits(command: Command): void {
  command.showHelpAfterError().exitOverride((error) => {
    if (error.exitCode === 0) process.exit(0);
    process.exit(2);
  });
  command.commands.forEach(usageExits);
}
usageExits(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  const code = error instanceof OvnPsampleError ? error.code : undefined;
  const message = code === undefined ? String(error) : `${(error as Error).message} [${code}]`;
  const log = currentCommandLogger();
  if (log === undefined) process.stderr.write(`ovn-psample: ${message}\n`);
  else log.fatal({ code: code ?? 'INTERNAL' }, message);
  process.exitCode = code === 'CLI_USAGE' || code === 'INVALID_OPTION' ? 2 : 1;
});

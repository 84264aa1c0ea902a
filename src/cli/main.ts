#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';

import { OvnPsampleError } from '../errors';
import { CliUsageError } from './errors';
import { decodeDatagrams, printDecoded } from './decode';
import { decodeCookieCommand, decodeWithOvn, DEFAULT_NB_REMOTE, DEFAULT_SB_REMOTE, ovnWanted, startOvnDecoder } from './decode-ovn';
import { parseFormat } from './format';
import { LISTEN_DELIVERY_INTERVAL_MS, deliveryIntervalOption } from './delivery-interval';
import { queueCapacityOption } from './queue-capacity';
import { dropPrivilegesOption } from './drop-privileges';
import { listen, type ListenOptions } from './listen';
import { collectorCommand } from './collector-command';
import { watchCommand } from './watch-command';
import { topCommand } from './top-command';
import { collect } from './parse';
import { currentCommandLogger } from './run-state';

interface DecodeCommandOptions {
  hex?: string[];
  file?: string;
  cookie?: string;
  nb?: string;
  sb?: string;
  format: 'json' | 'text';
}

const formatOption = new Option('--format <format>', 'json or text').default('json').argParser(parseFormat);

const program = new Command('ovn-psample')
  .description('Which OVN ACL and which Kubernetes network policy allowed or dropped a packet, from kernel psample samples')
  .version((JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version)
  .showHelpAfterError();

program
  .command('decode')
  .description('decode psample netlink messages given as hex or read from a file, one output line per message')
  .option('--hex <hex>', 'one whole netlink message (datagram) as hex; repeatable', collect)
  .option('--file <file>', 'hex lines (one datagram per line) or a binary datagram; - for stdin')
  .option('--cookie <hex>', 'an OVS sample cookie (obs_domain_id, obs_point_id: 16 hex digits) to resolve through OVN')
  .option('--nb <remote>', `OVN northbound database (default ${DEFAULT_NB_REMOTE} when present)`)
  .option('--sb <remote>', `OVN southbound database (default ${DEFAULT_SB_REMOTE} when present)`)
  .addOption(formatOption)
  .action(async (options: DecodeCommandOptions) => {
    const write = (line: string): boolean => process.stdout.write(`${line}\n`);
    if (options.cookie !== undefined) {
      if (options.hex !== undefined || options.file !== undefined) {
        throw new CliUsageError('decode: --cookie decodes a cookie alone; give it without --hex or --file');
      }
      write(await decodeCookieCommand({ ...options, cookie: options.cookie }));
      return;
    }
    const messages = decodeDatagrams(options);
    const events = ovnWanted(options)
      ? await decodeWithOvn(
          messages.map((m) => m.userCookie ?? new Uint8Array(0)),
          options,
        )
      : undefined;
    printDecoded(messages, options.format, events, write);
  });

program
  .command('listen')
  .description('stream live psample samples raw, one line each: no grouping, no pods (needs CAP_NET_ADMIN; see watch)')
  .option('--group <id>', 'psample group to keep (kernel-filtered); repeatable', collect)
  .option('--netns <ns>', 'network namespace: name under /run/netns, path, or pid')
  .option('--all-nsid', 'also receive samples from peer namespaces that have an nsid')
  .option('--rcvbuf <bytes>', 'socket receive buffer')
  .addOption(deliveryIntervalOption(LISTEN_DELIVERY_INTERVAL_MS))
  .addOption(queueCapacityOption())
  .option('--source <spec>', 'injected samples instead of the kernel: usersock:FAMILY_ID:GROUP_ID or generic:FAMILY_ID:GROUP_ID')
  .addOption(dropPrivilegesOption())
  .option('--count <n>', 'exit after n samples')
  .option('--duration <seconds>', 'exit after this many seconds')
  .option('--nb <remote>', `OVN northbound database: say which ACL and policy each sample hit (default ${DEFAULT_NB_REMOTE} when present)`)
  .option('--sb <remote>', `OVN southbound database, for datapath names and drop samples (default ${DEFAULT_SB_REMOTE} when present)`)
  .option('--no-enrich', 'do not decode cookies through OVN, even on a node with the default OVN sockets')
  .addOption(formatOption)
  .action(async (options: ListenOptions) => {
    const decoder = options.enrich && ovnWanted(options) ? await startOvnDecoder(options) : undefined;
    try {
      await listen(options, decoder, { stream: process.stdout }, (line) => process.stderr.write(`${line}\n`));
    } finally {
      await decoder?.close();
    }
  });

program.addCommand(watchCommand());
program.addCommand(topCommand());
program.addCommand(collectorCommand());

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

#!/usr/bin/env node
import { Command, Option } from 'commander';

import { OvnPsampleError } from '../errors';
import { decodeDatagrams, printDecoded } from './decode';
import { parseFormat } from './format';
import { listen } from './listen';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
const formatOption = new Option('--format <format>', 'json or text').default('json').argParser(parseFormat);

const program = new Command('ovn-psample')
  .description('Which OVN ACL and which Kubernetes network policy allowed or dropped a packet, from kernel psample samples')
  .showHelpAfterError();

program
  .command('decode')
  .description('decode psample netlink messages given as hex or read from a file, one output line per message')
  .option('--hex <hex>', 'one whole netlink message (datagram) as hex; repeatable', collect)
  .option('--file <file>', 'hex lines (one datagram per line) or a binary datagram; - for stdin')
  .addOption(formatOption)
  .action((options: { hex?: string[]; file?: string; format: 'json' | 'text' }) => {
    const messages = decodeDatagrams(options);
    printDecoded(messages, options.format, (line) => process.stdout.write(`${line}\n`));
  });

program
  .command('listen')
  .description('stream live psample samples (needs CAP_NET_ADMIN)')
  .option('--group <id>', 'psample group to keep (kernel-filtered); repeatable', collect)
  .option('--netns <ns>', 'network namespace: name under /run/netns, path, or pid')
  .option('--all-nsid', 'also receive samples from peer namespaces that have an nsid')
  .option('--rcvbuf <bytes>', 'socket receive buffer')
  .option('--source <spec>', 'injected samples instead of the kernel: usersock:FAMILY_ID:GROUP_ID')
  .option('--count <n>', 'exit after n samples')
  .option('--duration <seconds>', 'exit after this many seconds')
  .addOption(formatOption)
  .action(async (options) => {
    await listen(
      options,
      () => undefined,
      (line) => process.stdout.write(`${line}\n`),
      (line) => process.stderr.write(`${line}\n`),
    );
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  const message = error instanceof OvnPsampleError ? `${error.message} [${error.code}]` : String(error);
  process.stderr.write(`ovn-psample: ${message}\n`);
  process.exitCode = error instanceof OvnPsampleError && error.code === 'CLI_USAGE' ? 2 : 1;
});

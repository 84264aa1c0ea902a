import { Command } from 'commander';
import type { Logger } from 'pino';
import { SampleLines, type LineFormat, type SampleEventSource } from '../../output/sample-lines';
import { BufferedOutput, type OutputTarget } from '../../output/sink';
import { openPsample } from '../../psample/socket';
import { dropPrivileges } from '../../psample/privileges';
import type { DropPrivilegesOptions, OpenPsampleOptions } from '../../psample/types';
import { defineCommand } from '../command';
import { CliUsageError } from '../errors';
import { openIpfix } from '../../ipfix/source';
import type { OpenIpfixOptions } from '../../ipfix/options';
import type { OvnSampleDecoder } from '../../ovn/decoder';
import { DEFAULT_BRIDGE } from '../../ovs/collector-set';
import { chooseSource } from '../source-choice';
import { formatIpfixSample } from './decode';
import { hasLocalOvs, openLocalOvs, sslOptions, type SslFlags } from '../node-databases';
import {
  addEnrichOption,
  addOvnOptions,
  addSocketOptions,
  addSslOptions,
  addStopOptions,
  deliveryIntervalMs,
  LISTEN_DELIVERY_INTERVAL_MS,
  lineFormatOption,
  socketOptions,
  sourceChoice,
  ipfixOptions,
  dropPrivilegesFlag,
  SOURCE_HELP,
  stopLimits,
  type SampleSourceKind,
  type LogFlags,
  type OvnFlags,
  type SocketFlags,
  type StopFlags,
  type StopLimits,
} from '../options';
import { findOvnRemotes, requireNorthbound, startOvnSession } from '../ovn-session';
import { collect, wholeNumber } from '../parse';
import { describePrivileges } from '../privileges-text';
import { runUntilStopped } from '../stop';

interface ListenFlags extends LogFlags, SocketFlags, OvnFlags, StopFlags, SslFlags {
  group?: string[];
  format: LineFormat;
}

/**
 * Streams live samples until --count samples, --duration seconds, SIGINT/SIGTERM, or the reader
 * of the output going away; then logs the loss accounting, so an operator sees what was not
 * shown. Each batch of samples is rendered natively into one chunk of bytes (JSON or text lines)
 * and written at once. `decoder` adds each sample's event.
 */
async function listen(
  options: OpenPsampleOptions,
  format: LineFormat,
  { limit, seconds }: StopLimits,
  decoder: SampleEventSource | undefined,
  target: OutputTarget,
  log: Logger,
): Promise<void> {
  await runUntilStopped(log, seconds, (stop) => {
    const socket = openPsample(options);
    if (socket.privileges !== undefined) log.info(describePrivileges(socket.privileges));
    log.info(
      { netlinkFamily: socket.familyId, multicastGroup: socket.groupId },
      `listening (netlink family ${socket.familyId}, multicast group ${socket.groupId})`,
    );
    const output = new BufferedOutput(target, () => stop());
    socket.on('drop', (drop) =>
      log.warn({ kind: drop.kind, count: drop.count, total: drop.total }, `${drop.count} ${drop.kind} drop(s), ${drop.total} in all`),
    );
    let shown = 0;
    const lines = new SampleLines(format, decoder);
    // A batch is gathered into one chunk: written at once, not at the end of the turn, which would
    // cost each hand-off another turn of the event loop.
    socket.on('batch', (batch) => {
      const { bytes, lines: written } = lines.write(batch, limit - shown);
      shown += written;
      if (shown >= limit) stop();
      if (output.writeNow(bytes)) lines.recycle();
    });
    // A failing socket emits `close` and then `error`, in one go.
    socket.on('error', (error) => stop(error));
    return Promise.resolve(async () => {
      socket.close();
      lines.close();
      await output.close();
      const stats = socket.stats();
      const { received, kernelDrops, queueDrops, malformed, rejectedSender, closeDiscards } = stats;
      log.info(
        { shown, received, kernelDrops, queueDrops, malformed, rejectedSender, closeDiscards },
        `${shown} shown; received=${received} kernelDrops=${kernelDrops} queueDrops=${queueDrops} malformed=${malformed} ` +
          `rejectedSender=${rejectedSender} closeDiscards=${closeDiscards}`,
      );
    });
  });
}

/**
 * `listen --source ipfix`: each record of the IPFIX source as one line, in `decode --ipfix`'s
 * forms, its cookie decoded through OVN when a decoder is given; the source's every count in the
 * closing log line.
 */
async function listenIpfix(
  options: OpenIpfixOptions,
  dropRequest: true | DropPrivilegesOptions | undefined,
  format: LineFormat,
  { limit, seconds }: StopLimits,
  decoder: OvnSampleDecoder | undefined,
  target: OutputTarget,
  log: Logger,
): Promise<void> {
  await runUntilStopped(log, seconds, async (stop) => {
    const source = await openIpfix(options);
    if (dropRequest !== undefined) log.info(describePrivileges(dropPrivileges(dropRequest)));
    log.info(
      { address: source.address, port: source.port },
      `listening for OVS IPFIX on UDP ${source.address.includes(':') ? `[${source.address}]` : source.address}:${source.port}`,
    );
    const output = new BufferedOutput(target, () => stop());
    source.on('drop', (drop) =>
      log.warn(
        { kind: drop.kind, count: drop.count, total: drop.total },
        `${drop.count} IPFIX record(s) lost (${drop.kind}), ${drop.total} in all`,
      ),
    );
    let shown = 0;
    source.on('batch', (batch) => {
      let lines = '';
      for (const record of batch) {
        if (shown >= limit) break;
        const point = record.observationPointId;
        const event = decoder === undefined || point === undefined ? undefined : decoder.decode(record.observationDomainId, point);
        lines += `${formatIpfixSample(record, format, event)}\n`;
        shown++;
      }
      if (lines !== '') output.write(Buffer.from(lines));
      if (shown >= limit) stop();
    });
    source.on('error', (error) => stop(error));
    return async () => {
      source.close();
      await output.close();
      const stats = source.stats();
      log.info(
        { shown, ...stats },
        `${shown} shown; ${Object.entries(stats)
          .map(([name, count]) => `${name}=${count}`)
          .join(' ')}`,
      );
    };
  });
}

/** --source auto for listen: the node's OVS database (br-int) says whether its datapath has psample. */
async function listenSource(choice: SampleSourceKind, log: Logger): Promise<'psample' | 'ipfix'> {
  if (choice !== 'auto') return choice;
  if (!hasLocalOvs()) {
    log.warn('--source auto: no OVS database on this node to read the datapath from; reading psample');
    return 'psample';
  }
  const ovs = await openLocalOvs(undefined, undefined);
  try {
    return chooseSource('auto', ovs, DEFAULT_BRIDGE, log);
  } finally {
    await ovs.close();
  }
}

export function listenCommand(): Command {
  const command = new Command('listen')
    .description('stream live psample samples raw, one line each: no grouping, no pods (needs CAP_NET_ADMIN; see watch)')
    .option('--group <id>', 'psample group to keep (kernel-filtered); repeatable', collect);
  addSocketOptions(command, LISTEN_DELIVERY_INTERVAL_MS, SOURCE_HELP);
  addStopOptions(command, 'n samples');
  addOvnOptions(command, { nb: ': say which ACL and policy each sample hit', sb: ', for datapath names and drop samples' });
  addEnrichOption(command, 'do not decode cookies through OVN, even on a node with the OVN databases');
  addSslOptions(command);
  command.addOption(lineFormatOption());
  return defineCommand(command, async (flags: ListenFlags, log) => {
    // Every option is checked before anything is opened: a usage error must not leave a socket or a connection behind.
    const limits = stopLimits(flags);
    const choice = sourceChoice(flags);
    if (choice.kind === 'ipfix' && flags.group !== undefined) {
      throw new CliUsageError('--group names psample groups: the IPFIX source has none');
    }
    const ipfix = choice.kind === 'psample' ? undefined : ipfixOptions(flags);
    const options: OpenPsampleOptions = {
      ...socketOptions(flags),
      deliveryIntervalMs: deliveryIntervalMs(flags.deliveryInterval),
      ...(flags.group === undefined ? {} : { groups: flags.group.map((g) => wholeNumber('--group', g, 0)) }),
    };
    const ssl = sslOptions(flags);
    // The OVN databases named, or this node's: then each sample's event is added.
    const remotes = flags.enrich ? findOvnRemotes({ nb: flags.nb, sb: flags.sb }) : undefined;
    const wanted = remotes !== undefined && (flags.nb !== undefined || flags.sb !== undefined || remotes.nb !== undefined);
    const session = wanted ? await startOvnSession({ ...remotes, nb: requireNorthbound(remotes) }, ssl, log, { pods: false }) : undefined;
    try {
      if (ipfix !== undefined && (await listenSource(choice.kind, log)) === 'ipfix') {
        await listenIpfix(
          ipfix,
          dropPrivilegesFlag(flags.dropPrivileges),
          flags.format,
          limits,
          session?.decoder,
          { stream: process.stdout },
          log,
        );
      } else {
        await listen(options, flags.format, limits, session?.decoder, { stream: process.stdout }, log);
      }
    } finally {
      await session?.close();
    }
  });
}

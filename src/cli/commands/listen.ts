import { Command } from 'commander';
import type { Logger } from 'pino';
import { SampleLines, type LineFormat, type SampleEventSource } from '../../output/sample-lines';
import { BufferedOutput, type OutputTarget } from '../../output/sink';
import { openPsample } from '../../psample/socket';
import type { OpenPsampleOptions } from '../../psample/types';
import { defineCommand } from '../command';
import { sslOptions, type SslFlags } from '../node-databases';
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
  stopLimits,
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

export function listenCommand(): Command {
  const command = new Command('listen')
    .description('stream live psample samples raw, one line each: no grouping, no pods (needs CAP_NET_ADMIN; see watch)')
    .option('--group <id>', 'psample group to keep (kernel-filtered); repeatable', collect);
  addSocketOptions(
    command,
    LISTEN_DELIVERY_INTERVAL_MS,
    'injected samples instead of the kernel: usersock:FAMILY_ID:GROUP_ID or generic:FAMILY_ID:GROUP_ID',
  );
  addStopOptions(command, 'n samples');
  addOvnOptions(command, { nb: ': say which ACL and policy each sample hit', sb: ', for datapath names and drop samples' });
  addEnrichOption(command, 'do not decode cookies through OVN, even on a node with the OVN databases');
  addSslOptions(command);
  command.addOption(lineFormatOption());
  return defineCommand(command, async (flags: ListenFlags, log) => {
    // Every option is checked before anything is opened: a usage error must not leave a socket or a connection behind.
    const limits = stopLimits(flags);
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
      await listen(options, flags.format, limits, session?.decoder, { stream: process.stdout }, log);
    } finally {
      await session?.close();
    }
  });
}

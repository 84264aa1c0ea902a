import { openPsample } from '../psample/socket';
import type { OpenPsampleOptions, PsampleMessage, PsampleSourceOptions } from '../psample/types';
import type { OvnSampleEvent } from '../ovn/event';
import { CliUsageError } from './errors';
import type { OvnRemoteOptions } from './decode-ovn';
import { formatSample, type OutputFormat } from './format';
import { wholeNumber } from './parse';

export interface ListenOptions extends OvnRemoteOptions {
  group?: string[];
  netns?: string;
  allNsid?: boolean;
  rcvbuf?: string;
  source?: string;
  count?: string;
  duration?: string;
  format: OutputFormat;
}

/** `usersock:FAMILY:GROUP` or `generic:FAMILY:GROUP`. */
export function parseSource(value: string): PsampleSourceOptions {
  const [protocol, family, group, ...extra] = value.split(':');
  if ((protocol !== 'usersock' && protocol !== 'generic') || family === undefined || group === undefined || extra.length > 0) {
    throw new CliUsageError(`--source ${value}: use usersock:FAMILY_ID:GROUP_ID or generic:FAMILY_ID:GROUP_ID`);
  }
  return { protocol, familyId: wholeNumber('--source family', family, 0), groupId: wholeNumber('--source group', group, 1) };
}

export function listenSocketOptions(options: ListenOptions): OpenPsampleOptions {
  return {
    groups: options.group?.map((g) => wholeNumber('--group', g, 0)),
    netns: options.netns,
    listenAllNsid: options.allNsid,
    receiveBufferBytes: options.rcvbuf === undefined ? undefined : wholeNumber('--rcvbuf', options.rcvbuf, 1),
    source: options.source === undefined ? undefined : parseSource(options.source),
  };
}

/**
 * Streams live samples until --count samples, --duration seconds, or SIGINT/SIGTERM; then
 * prints the loss accounting to stderr, so an operator sees what was not shown.
 */
export async function listen(
  options: ListenOptions,
  describe: ((message: PsampleMessage) => OvnSampleEvent) | undefined,
  write: (line: string) => void,
  writeError: (line: string) => void,
): Promise<void> {
  // Every option is checked before the socket exists: a usage error must not leave it open.
  const limit = options.count === undefined ? Infinity : wholeNumber('--count', options.count, 1);
  const seconds = options.duration === undefined ? undefined : wholeNumber('--duration', options.duration, 1);
  const socketOptions = listenSocketOptions(options);
  const controller = new AbortController();
  const socket = openPsample({ ...socketOptions, signal: controller.signal });
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const timer = seconds === undefined ? undefined : setTimeout(stop, seconds * 1000);
  writeError(`ovn-psample: listening (netlink family ${socket.familyId}, multicast group ${socket.groupId})`);
  socket.on('drop', (drop) => writeError(`ovn-psample: ${drop.count} ${drop.kind} drop(s), ${drop.total} in all`));
  let shown = 0;
  try {
    for await (const message of socket) {
      if (message.command !== 'sample') continue;
      write(formatSample(message, options.format, describe?.(message)));
      if (++shown >= limit) break;
    }
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    const stats = socket.stats();
    socket.close();
    writeError(
      `ovn-psample: ${shown} shown; received=${stats.received} kernelDrops=${stats.kernelDrops} ` +
        `queueDrops=${stats.queueDrops} malformed=${stats.malformed} rejectedSender=${stats.rejectedSender}`,
    );
  }
}

import { SampleLines, type SampleEventSource } from '../output/sample-lines';
import { BufferedOutput, type OutputTarget } from '../output/sink';
import { openPsample } from '../psample/socket';
import type { OpenPsampleOptions, PsampleSourceOptions } from '../psample/types';
import { deliveryIntervalMs } from './delivery-interval';
import { queueCapacity } from './queue-capacity';
import { describePrivileges, dropPrivilegesFlag } from './drop-privileges';
import { CliUsageError } from './errors';
import type { OvnRemoteOptions } from './decode-ovn';
import type { OutputFormat } from './format';
import { wholeNumber } from './parse';

export interface ListenOptions extends OvnRemoteOptions {
  group?: string[];
  netns?: string;
  allNsid?: boolean;
  rcvbuf?: string;
  /** --delivery-interval; absent: the library's adaptive interval. */
  deliveryInterval?: string;
  /** --queue-capacity; absent: the library's default. */
  queueCapacity?: string;
  source?: string;
  count?: string;
  duration?: string;
  /** False with --no-enrich: no OVN decoder even where the default OVN sockets exist. */
  enrich: boolean;
  format: OutputFormat;
  dropPrivileges?: string | boolean;
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
    deliveryIntervalMs: options.deliveryInterval === undefined ? undefined : deliveryIntervalMs(options.deliveryInterval),
    queueCapacity: options.queueCapacity === undefined ? undefined : queueCapacity(options.queueCapacity),
    source: options.source === undefined ? undefined : parseSource(options.source),
    dropPrivileges: dropPrivilegesFlag(options.dropPrivileges),
  };
}

/**
 * Streams live samples until --count samples, --duration seconds, SIGINT/SIGTERM, or the reader
 * of the output going away; then prints the loss accounting to stderr, so an operator sees what
 * was not shown. Each batch of samples is rendered natively into one chunk of bytes (JSON or text
 * lines) and written at once. `decoder` adds each sample's event.
 */
export async function listen(
  options: ListenOptions,
  decoder: SampleEventSource | undefined,
  target: OutputTarget,
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
  const output = new BufferedOutput(target, stop);
  const timer = seconds === undefined ? undefined : setTimeout(stop, seconds * 1000);
  if (socket.privileges !== undefined) writeError(`ovn-psample: ${describePrivileges(socket.privileges)}`);
  writeError(`ovn-psample: listening (netlink family ${socket.familyId}, multicast group ${socket.groupId})`);
  socket.on('drop', (drop) => writeError(`ovn-psample: ${drop.count} ${drop.kind} drop(s), ${drop.total} in all`));
  let shown = 0;
  const lines = new SampleLines(options.format, decoder);
  // A batch is gathered into one chunk: written at once, not at the end of the turn, which would
  // cost each hand-off another turn of the event loop.
  socket.on('batch', (batch) => {
    const { bytes, lines: written } = lines.write(batch, limit - shown);
    shown += written;
    if (shown >= limit) stop();
    if (output.writeNow(bytes)) lines.recycle();
  });
  // A failing socket emits `close` and then `error`, in one go.
  let failure: Error | undefined;
  socket.on('error', (error) => (failure = error));
  try {
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    if (failure !== undefined) throw failure;
  } finally {
    lines.close();
    clearTimeout(timer);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await output.close();
    const stats = socket.stats();
    writeError(
      `ovn-psample: ${shown} shown; received=${stats.received} kernelDrops=${stats.kernelDrops} ` +
        `queueDrops=${stats.queueDrops} malformed=${stats.malformed} rejectedSender=${stats.rejectedSender} ` +
        `closeDiscards=${stats.closeDiscards}`,
    );
  }
}

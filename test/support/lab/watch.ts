import { jsonLines, message, startCli, type CliProcess } from '../cli';

// `ovn-psample watch --format json` run from dist/ in the guest, as the lab files start it.

/** Members of a watch JSON line that say where a sample came from, not what happened to the packet. */
const SOURCE_MEMBERS = new Set([
  'time',
  'timestampNs',
  'group',
  'iifindex',
  'interface',
  'oifindex',
  'origSize',
  'rate',
  'probability',
  'source',
  'exporter',
  'weight',
  'packet',
  'data',
]);

/** How a watch logs that it reads: psample's group, or its bound IPFIX socket. */
export const LISTENING_PSAMPLE = /^listening to psample group/;
export const LISTENING_IPFIX = /^listening for OVS IPFIX/;

export type Watch = CliProcess;

/** Starts `watch --format json --log-format json ARGS` and resolves once it logs a message matching `ready`. */
export async function startWatch(args: readonly string[], ready: RegExp): Promise<Watch> {
  const watch = startCli(['watch', '--format', 'json', '--log-format', 'json', ...args]);
  await watch.logged(message(ready), `a message matching ${ready}`, 60_000);
  return watch;
}

/** The JSON lines a watch printed. */
export function watchEvents(watch: Watch): Record<string, unknown>[] {
  return jsonLines(watch.stdout());
}

/** An event without what only its source has (packet bytes, psample group and ifindex; exporter, weight). */
export const withoutSource = (event: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(event).filter(([key]) => !SOURCE_MEMBERS.has(key)));

/** The IPFIX watch's exit summary, as it logs it. */
export function ipfixSummary(watch: Watch): string | undefined {
  return /"msg":"(summary: \d+ IPFIX records received[^"]*)"/.exec(watch.stderr())?.[1];
}

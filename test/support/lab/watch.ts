import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

// `ovn-psample watch --format json` run from dist/ in the guest, as the lab files that compare
// what the psample watch and the IPFIX watch print start it.

const CLI = path.join(__dirname, '..', '..', '..', 'dist', 'cli', 'main.js');

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
export const LISTENING_PSAMPLE = /"msg":"listening to psample group/;
export const LISTENING_IPFIX = /"msg":"listening for OVS IPFIX/;

export interface Watch {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** Starts `watch --format json --log-format json ARGS` and resolves once its log matches `ready`. */
export async function startWatch(args: readonly string[], ready: RegExp): Promise<Watch> {
  const child = spawn(process.execPath, [CLI, 'watch', '--format', 'json', '--log-format', 'json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`watch ${args.join(' ')} did not start within 60 s:\n${stderr}`)), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (ready.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`watch exited (${code}) before listening:\n${stderr}`)));
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** The JSON lines a watch printed. */
export function watchEvents(watch: Watch): Record<string, unknown>[] {
  return watch
    .stdout()
    .trimEnd()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** An event without what only its source has (packet bytes, psample group and ifindex; exporter, weight). */
export const withoutSource = (event: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(event).filter(([key]) => !SOURCE_MEMBERS.has(key)));

/** The IPFIX watch's exit summary, as it logs it. */
export function ipfixSummary(watch: Watch): string | undefined {
  return /"msg":"(summary: \d+ IPFIX records received[^"]*)"/.exec(watch.stderr())?.[1];
}

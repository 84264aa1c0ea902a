import { describe, expect, it } from 'vitest';
import { fileNetns } from '../../support/netns';
import { jsonLines, startCli, type CliProcess } from '../../support/cli';
import { udp } from './frames';
import { MS, T0, traffic, watchTrafficOnce } from './mixed-traffic';
import { cookieOf, OUTSIDE_IP, PODS, PSAMPLE_GROUP, useOvnkNode } from './ovnk-node';

// watch's JSON and human lines from psample are written natively (src/cli/native-lines.ts) unless
// --pcapng needs each packet. One suite for both formats: both paths, over the same injected
// samples, on the OVN-Kubernetes-shaped node (real ovsdb-server, real schemas, pods). A format
// says how its lines are read and what it shows that the other does not.

export interface WatchNativeFormat {
  readonly name: string;
  /** The namespace's prefix and the usersock group: one of each per test file. */
  readonly netnsPrefix: string;
  readonly usersockGroup: number;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** A line's verdict as the format writes it. */
  readonly verdictOf: (line: string) => string;
  readonly drop: string;
  readonly allow: string;
  /** What the format shows of the 6 packets SIGTERM released, in order. */
  readonly released: (lines: readonly string[]) => unknown[];
  readonly releasedExpected: readonly unknown[];
  /** What the format alone asserts of the first run's lines. */
  readonly checkFirstRun?: (stdout: string) => void;
  /** How a hostile ACL name reaches the lines: escaped, one line per packet. */
  readonly checkHostileName: (stdout: string, lastLine: string, hostile: string) => void;
}

const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const linesOf = (stdout: string): string[] => stdout.split('\n').filter((line) => line !== '');
const counts = (s: Record<string, unknown>): unknown[] => [s.received, s.packets, s.shown, s.filtered];
/** What the summary says the decoder answered: every sample counted, on either path. */
const decodes = (s: Record<string, unknown>): unknown[] => [s.decoded, s.unknownCookies, s.staleCookies];

export function describeWatchNative(format: WatchNativeFormat): void {
  const ns = fileNetns(format.netnsPrefix);
  const node = useOvnkNode(ns, format.usersockGroup);
  const watch = (args: readonly string[]): CliProcess =>
    startCli(
      node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...format.args, ...args]),
      format.env === undefined ? {} : { env: format.env },
    );
  const runOnce = (extra: readonly string[]) => watchTrafficOnce(watch, (...samples) => node.send(...samples), extra);
  const verdictOf = (line: string | undefined): string | undefined => (line === undefined ? undefined : format.verdictOf(line));

  describe(`watch --format ${format.name}, native`, () => {
    it('writes the bytes, the metrics and the summary the per-packet path (--pcapng) gives for the same samples', async () => {
      const native = await runOnce([]);
      const perPacket = await runOnce(['--pcapng', '/dev/null']);
      expect(linesOf(native.stdout)).toHaveLength(18);
      format.checkFirstRun?.(native.stdout);
      expect(native.stdout).toBe(perPacket.stdout);
      expect(native.metrics.length).toBeGreaterThan(5);
      expect(native.metrics).toEqual(perPacket.metrics);
      expect(counts(native.summary)).toEqual([24, 18, 18, 0]);
      expect(counts(native.summary)).toEqual(counts(perPacket.summary));
      expect(native.summary.decoded).toBe(24);
      expect(decodes(native.summary)).toEqual(decodes(perPacket.summary));
    });

    it('filters as the per-packet path does: the same lines and counts', async () => {
      const native = await runOnce(['--action', 'drop', '--namespace', 'shop']);
      const perPacket = await runOnce(['--action', 'drop', '--namespace', 'shop', '--pcapng', '/dev/null']);
      expect(native.stdout).toBe(perPacket.stdout);
      expect(counts(native.summary)).toEqual(counts(perPacket.summary));
      expect(native.summary.filtered).toBeGreaterThan(0);
      expect(native.summary.shown).toBeGreaterThan(0);
    });

    it('SIGTERM with packets still in their grouping window prints them, their chains made while the OVN session was there', async () => {
      const run = watch(['--group-window', '60000']);
      await run.listening;
      node.send(...traffic().slice(0, 8));
      await settle(500);
      expect(run.stdout()).toBe('');
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(format.released(linesOf(run.stdout()))).toEqual(format.releasedExpected);
      const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
      expect(summary).toMatchObject({ received: 8, packets: 6, shown: 6 });
    });

    it('--count N stops after N lines', async () => {
      const run = watch(['--count', '2']);
      await run.listening;
      node.send(...traffic());
      expect(await run.exited).toBe(0);
      expect(linesOf(run.stdout())).toHaveLength(2);
      const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
      expect(summary).toMatchObject({ shown: 2 });
    });

    it('remakes a route when the decoder answers otherwise: an ACL changed while watching (its action, a hostile name) changes the lines after it, escaped', async () => {
      const run = watch([]);
      await run.listening;
      let n = 0;
      const egress = (): void => {
        n++;
        node.send({
          data: udp({ src: PODS.frontend.ip, dst: OUTSIDE_IP, srcPort: 5000, dstPort: 53 }),
          cookie: cookieOf('egressFirewall'),
          at: T0 + BigInt(n) * 100n * MS,
        });
      };
      const lastLine = (): string | undefined => linesOf(run.stdout()).at(-1);
      egress();
      await settle(300);
      expect(verdictOf(lastLine())).toBe(format.drop);
      const hostile = 'shop\u001b[2J\nFAKE 00:00:00.000000  ALLOW';
      const where = [['name', '==', 'EF:shop:0']];
      await node.dbs.nbWriter.transact('OVN_Northbound', [
        { op: 'update', table: 'ACL', where, row: { action: 'allow-related' } },
        { op: 'mutate', table: 'ACL', where, mutations: [['external_ids', 'delete', ['set', ['k8s.ovn.org/name']]]] },
        { op: 'mutate', table: 'ACL', where, mutations: [['external_ids', 'insert', ['map', [['k8s.ovn.org/name', hostile]]]]] },
      ]);
      const deadline = Date.now() + 15_000;
      while (verdictOf(lastLine()) === format.drop && Date.now() < deadline) {
        egress();
        await settle(100);
      }
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(verdictOf(lastLine())).toBe(format.allow);
      format.checkHostileName(run.stdout(), lastLine()!, hostile);
    });
  });
}

/** The JSON line's verdict and sample count. */
export const JSON_FORMAT: Omit<WatchNativeFormat, 'netnsPrefix' | 'usersockGroup'> = {
  name: 'json',
  args: ['--format', 'json'],
  verdictOf: (line) => jsonLines<{ verdict: string }>(line)[0]!.verdict,
  drop: 'drop',
  allow: 'allow',
  released: (lines) => lines.map((line) => jsonLines<{ verdict: string; samples: number }>(line)[0]!).map((l) => [l.verdict, l.samples]),
  releasedExpected: [
    ['drop', 2],
    ['allow', 1],
    ['drop', 1],
    ['drop', 2],
    ['allow', 1],
    ['drop', 1],
  ],
  checkHostileName: (stdout, lastLine, hostile) => {
    // One JSON line per packet whatever the names hold, and the name read back as it was written.
    expect(jsonLines(stdout).length).toBe(linesOf(stdout).length);
    expect(lastLine).toContain(JSON.stringify(hostile).slice(1, -1));
  },
};

/** The human line's verdict column, in a time zone half an hour off the hour. */
export const HUMAN_FORMAT: Omit<WatchNativeFormat, 'netnsPrefix' | 'usersockGroup'> = {
  name: 'human',
  args: [],
  env: { TZ: 'America/St_Johns' },
  verdictOf: (line) => line.split(/ {2,}/)[1]!,
  drop: 'DROP',
  allow: 'ALLOW',
  released: (lines) => lines.map((line) => line.split(/ {2,}/)[1]),
  releasedExpected: ['DROP', 'ALLOW', 'DROP', 'DROP', 'ALLOW', 'DROP'],
  checkFirstRun: (stdout) => {
    // The kernel's time in St_Johns (UTC-2:30 in June): 15:06:40 UTC.
    expect(stdout).toMatch(
      /^12:36:40\.123456 {2}DROP {4}anp:pass-monitoring→isolation:shop {2}shop {2}tenant-b\/client → shop\/backend {2}ICMP /,
    );
  },
  checkHostileName: (stdout, lastLine) => {
    expect(lastLine).toContain('shop\\x1b[2J\\nFAKE 00:00:00.000000  ALLOW');
    // One line per packet whatever the names hold: no line starts with the forged text.
    expect(linesOf(stdout).every((l) => /^\d\d:\d\d:\d\d\.\d{6} {2}/.test(l))).toBe(true);
    expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  },
};

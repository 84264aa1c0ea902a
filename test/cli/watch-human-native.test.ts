import { describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { startCli, type CliProcess } from '../support/cli';
import { udp } from './support/frames';
import { cookieOf, OUTSIDE_IP, PODS, PSAMPLE_GROUP, useOvnkNode } from './support/ovnk-node';
import { MS, T0, traffic, watchTrafficOnce } from './support/mixed-traffic';

// watch's human lines from psample are written natively (src/cli/native-lines.ts) unless
// --pcapng needs each packet: both paths, over the same injected samples, on the
// OVN-Kubernetes-shaped node (real ovsdb-server, real schemas, pods), in a time zone half an hour
// off the hour.

const ns = fileNetns('ovnps-cli-human-native');
const GROUP = 19;
const TZ = 'America/St_Johns';

const node = useOvnkNode(ns, GROUP);

const watch = (args: readonly string[]): CliProcess =>
  startCli(node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...args]), { env: { TZ } });

const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const runOnce = (extra: readonly string[]) => watchTrafficOnce(watch, (...samples) => node.send(...samples), extra);

const counts = (s: Record<string, unknown>): unknown[] => [s.received, s.packets, s.shown, s.filtered];
/** What the summary says the decoder answered: every sample counted, on either path. */
const decodes = (s: Record<string, unknown>): unknown[] => [s.decoded, s.unknownCookies, s.staleCookies];

const linesOf = (stdout: string): string[] => stdout.split('\n').filter((line) => line !== '');

describe('watch --format human, native', () => {
  it('writes the bytes, the metrics and the summary the per-packet path (--pcapng) gives for the same samples', async () => {
    const native = await runOnce([]);
    const perPacket = await runOnce(['--pcapng', '/dev/null']);
    expect(linesOf(native.stdout)).toHaveLength(18);
    // The kernel's time in St_Johns (UTC-2:30 in June): 15:06:40 UTC.
    expect(native.stdout).toMatch(
      /^12:36:40\.123456 {2}DROP {4}anp:pass-monitoring→isolation:shop {2}shop {2}tenant-b\/client → shop\/backend {2}ICMP /,
    );
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
    expect(linesOf(run.stdout()).map((line) => line.split(/ {2,}/)[1])).toEqual(['DROP', 'ALLOW', 'DROP', 'DROP', 'ALLOW', 'DROP']);
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
    const lastLine = (): string => linesOf(run.stdout()).at(-1) ?? '';
    egress();
    await settle(300);
    expect(lastLine().split(/ {2,}/)[1]).toBe('DROP');
    const hostile = 'shop\u001b[2J\nFAKE 00:00:00.000000  ALLOW';
    const where = [['name', '==', 'EF:shop:0']];
    await node.dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'update', table: 'ACL', where, row: { action: 'allow-related' } },
      { op: 'mutate', table: 'ACL', where, mutations: [['external_ids', 'delete', ['set', ['k8s.ovn.org/name']]]] },
      { op: 'mutate', table: 'ACL', where, mutations: [['external_ids', 'insert', ['map', [['k8s.ovn.org/name', hostile]]]]] },
    ]);
    const deadline = Date.now() + 15_000;
    while (lastLine().split(/ {2,}/)[1] === 'DROP' && Date.now() < deadline) {
      egress();
      await settle(100);
    }
    expect(await run.stop('SIGTERM')).toBe(0);
    const line = lastLine();
    expect(line.split(/ {2,}/)[1]).toBe('ALLOW');
    expect(line).toContain('shop\\x1b[2J\\nFAKE 00:00:00.000000  ALLOW');
    // One line per packet whatever the names hold: no line starts with the forged text.
    expect(linesOf(run.stdout()).every((l) => /^\d\d:\d\d:\d\d\.\d{6} {2}/.test(l))).toBe(true);
    expect(run.stdout()).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});

import { describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { jsonLines, startCli, type CliProcess } from '../support/cli';
import { udp } from './support/frames';
import { cookieOf, OUTSIDE_IP, PODS, PSAMPLE_GROUP, useOvnkNode } from './support/ovnk-node';
import { MS, T0, traffic, watchTrafficOnce } from './support/mixed-traffic';

// watch --format json from psample writes its lines natively (src/cli/native-lines.ts) unless
// --pcapng needs each packet: both paths, over the same injected samples, on the
// OVN-Kubernetes-shaped node (real ovsdb-server, real schemas, pods).

const ns = fileNetns('ovnps-cli-json-native');
const GROUP = 18;

const node = useOvnkNode(ns, GROUP);

const watch = (args: readonly string[]): CliProcess => startCli(node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...args]));

const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const runOnce = (extra: readonly string[]) =>
  watchTrafficOnce(watch, (...samples) => node.send(...samples), ['--format', 'json', ...extra]);

const counts = (s: Record<string, unknown>): unknown[] => [s.received, s.packets, s.shown, s.filtered];

describe('watch --format json, native', () => {
  it('writes the bytes, the metrics and the summary the per-packet path (--pcapng) gives for the same samples', async () => {
    const native = await runOnce([]);
    const perPacket = await runOnce(['--pcapng', '/dev/null']);
    expect(jsonLines(native.stdout)).toHaveLength(18);
    expect(native.stdout).toBe(perPacket.stdout);
    expect(native.metrics.length).toBeGreaterThan(5);
    expect(native.metrics).toEqual(perPacket.metrics);
    expect(counts(native.summary)).toEqual([24, 18, 18, 0]);
    expect(counts(native.summary)).toEqual(counts(perPacket.summary));
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
    const run = watch(['--format', 'json', '--group-window', '60000']);
    await run.listening;
    node.send(...traffic().slice(0, 8));
    await settle(500);
    expect(run.stdout()).toBe('');
    expect(await run.stop('SIGTERM')).toBe(0);
    const lines = jsonLines<{ verdict: string; samples: number }>(run.stdout());
    expect(lines.map((line) => [line.verdict, line.samples])).toEqual([
      ['drop', 2],
      ['allow', 1],
      ['drop', 1],
      ['drop', 2],
      ['allow', 1],
      ['drop', 1],
    ]);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ received: 8, packets: 6, shown: 6 });
  });

  it('--count N stops after N lines', async () => {
    const run = watch(['--format', 'json', '--count', '2']);
    await run.listening;
    node.send(...traffic());
    expect(await run.exited).toBe(0);
    expect(jsonLines(run.stdout())).toHaveLength(2);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ shown: 2 });
  });

  it('remakes a route when the decoder answers otherwise: an ACL changed while watching changes the lines after it', async () => {
    const run = watch(['--format', 'json']);
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
    const lastVerdict = (): string | undefined => jsonLines<{ verdict: string }>(run.stdout()).at(-1)?.verdict;
    egress();
    await settle(300);
    expect(lastVerdict()).toBe('drop');
    await node.dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'update', table: 'ACL', where: [['name', '==', 'EF:shop:0']], row: { action: 'allow-related' } },
    ]);
    const deadline = Date.now() + 15_000;
    while (lastVerdict() === 'drop' && Date.now() < deadline) {
      egress();
      await settle(100);
    }
    expect(lastVerdict()).toBe('allow');
    expect(await run.stop('SIGTERM')).toBe(0);
  });
});

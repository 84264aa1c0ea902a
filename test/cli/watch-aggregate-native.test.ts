import { describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { jsonLines, startCli, type CliProcess } from '../support/cli';
import { icmpEcho, tcpSyn } from './support/frames';
import { cookieOf, PODS, PSAMPLE_GROUP, useOvnkNode } from './support/ovnk-node';
import { T0, MS, traffic, watchTrafficOnce } from './support/mixed-traffic';

// watch --aggregate from psample takes its packets natively (src/cli/native-aggregate.ts) unless
// --count needs each one: both paths, over the same injected samples, on the OVN-Kubernetes-shaped
// node (real ovsdb-server, real schemas, pods).

const ns = fileNetns('ovnps-cli-aggr-native');
const GROUP = 17;

const node = useOvnkNode(ns, GROUP);

const watch = (args: readonly string[]): CliProcess => startCli(node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...args]));

type Line = Record<string, unknown> & { type: string };

const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function runOnce(extra: readonly string[]): Promise<{ records: Line[]; metrics: string[]; summary: Record<string, unknown> }> {
  const { stdout, metrics, summary } = await watchTrafficOnce(watch, (...samples) => node.send(...samples), [
    '--aggregate',
    '3600',
    ...extra,
  ]);
  // The two runs' intervals are their own: all else must be the same.
  const records = jsonLines<Line>(stdout).map((record) => ({ ...record, start: 'start', end: 'end' }));
  return { records, metrics, summary };
}

describe('watch --aggregate, native', () => {
  it('gives the records, the metrics and the summary the per-packet path (--count) gives for the same samples', async () => {
    const native = await runOnce([]);
    const perPacket = await runOnce(['--count', '1000000']);
    expect(native.records.map((r) => r.type)).toEqual(['flow', 'flow', 'flow', 'flow', 'interval']);
    expect(native.records).toEqual(perPacket.records);
    expect(native.metrics.length).toBeGreaterThan(5);
    expect(native.metrics).toEqual(perPacket.metrics);
    const counts = (s: Record<string, unknown>): unknown[] => [s.received, s.packets, s.shown, s.filtered, s.flowRecords, s.flowOverflow];
    expect(counts(native.summary)).toEqual([24, 18, 18, 0, 4, 0]);
    expect(counts(native.summary)).toEqual(counts(perPacket.summary));
    const decodes = (s: Record<string, unknown>): unknown[] => [s.decoded, s.unknownCookies, s.staleCookies];
    expect(native.summary.decoded).toBe(24);
    expect(decodes(native.summary)).toEqual(decodes(perPacket.summary));
  });

  it('a packet whose samples come in two deliveries is one packet', async () => {
    const run = watch(['--aggregate', '3600', '--group-window', '2000']);
    await run.listening;
    const data = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq: 99 });
    node.send({ data, cookie: cookieOf('anpPass'), at: T0 });
    // Several delivery intervals later, within the window.
    await settle(400);
    node.send({ data, cookie: cookieOf('isolation'), at: T0 + 400n * MS });
    await settle(300);
    expect(await run.stop('SIGTERM')).toBe(0);
    const [flow, interval] = jsonLines<Line>(run.stdout());
    expect(flow).toMatchObject({ type: 'flow', verdict: 'drop', sampledPackets: 1, samples: 2 });
    expect((flow!.chain as unknown[]).length).toBe(2);
    expect(interval).toMatchObject({ type: 'interval', flows: 1, sampledPackets: 1, samples: 2 });
  });

  it('SIGTERM with packets still in their grouping window puts them in the last interval', async () => {
    const run = watch(['--aggregate', '3600', '--group-window', '60000']);
    await run.listening;
    node.send(...traffic().slice(0, 8));
    await settle(500);
    expect(await run.stop('SIGTERM')).toBe(0);
    const records = jsonLines<Line>(run.stdout());
    expect(records.at(-1)).toMatchObject({ type: 'interval', sampledPackets: 6, samples: 8 });
    // Their chains were made while the OVN session was still there.
    expect(records.slice(0, -1).map((record) => record.verdict)).toEqual(['drop', 'allow', 'drop', 'allow']);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ received: 8, packets: 6, shown: 6 });
  });

  it('a --port filter keys the source port: a flow to another port is kept out by its source port alone', async () => {
    const run = watch(['--aggregate', '3600', '--port', '40001']);
    await run.listening;
    node.send(
      ...[0, 1, 2].map((i) => ({
        data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40_000 + i, dstPort: 80 }),
        cookie: cookieOf('allowFrontend'),
        at: T0 + BigInt(i) * MS,
      })),
    );
    await settle();
    expect(await run.stop('SIGTERM')).toBe(0);
    const [flow, interval] = jsonLines<Line>(run.stdout());
    expect(flow).toMatchObject({ type: 'flow', dstPort: 80, sampledPackets: 1 });
    expect(interval).toMatchObject({ type: 'interval', flows: 1, sampledPackets: 1 });
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ packets: 3, shown: 1, filtered: 2 });
  });
});

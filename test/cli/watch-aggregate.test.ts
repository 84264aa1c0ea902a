import { describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { freePort } from '../support/ovsdb-server';
import { jsonLines, startCli, type CliProcess } from '../support/cli';
import { icmpEcho, tcpSyn, udp } from './support/frames';
import { cookieOf, OUTSIDE_IP, PODS, PSAMPLE_GROUP, useOvnkNode, type NodeSample } from './support/ovnk-node';

const ns = fileNetns('ovnps-cli-aggregate');
const GROUP = 16;
const T0 = 1_750_000_000_123_456_789n;
const MS = 1_000_000n;
/** psample's probability 1/2 (probability 1 is 2^32-1). */
const HALF = 0x7fffffff;

const node = useOvnkNode(ns, GROUP);

const watch = (args: readonly string[]): CliProcess => startCli(node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...args]));

type Sample = NodeSample & { cookie: Uint8Array; at: bigint };

const send = (...samples: Sample[]): void => node.send(...samples);

/** tenant-b/client pings shop/backend: the admin network policy passes it, the namespace's isolation drops it. */
function passThenDrop(seq: number, at: bigint): Sample[] {
  const data = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq });
  return [
    { data, cookie: cookieOf('anpPass'), at },
    { data, cookie: cookieOf('isolation'), at: at + 20_000n },
  ];
}

type Line = Record<string, unknown> & { type: string };

const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('watch --aggregate', () => {
  it('writes one record per flow (endpoints, protocol and port or ICMP type, chain, samples and the packets they stand for), then the interval, when stopped', async () => {
    const run = watch(['--aggregate', '3600']);
    await run.listening;
    send(
      ...passThenDrop(1, T0),
      ...passThenDrop(2, T0 + 1000n * MS),
      // 1 in 100 packets, two connections to port 80: one flow of 200 packets.
      {
        data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40_000, dstPort: 80 }),
        cookie: cookieOf('allowFrontend'),
        at: T0 + 5n * MS,
        rate: 100,
        probability: false,
      },
      {
        data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40_001, dstPort: 80 }),
        cookie: cookieOf('allowFrontend'),
        at: T0 + 7n * MS,
        rate: 100,
        probability: false,
      },
      // Another port is another flow; probability 1/2: 2 packets each.
      {
        data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40_002, dstPort: 443 }),
        cookie: cookieOf('allowFrontend'),
        at: T0 + 9n * MS,
        rate: HALF,
      },
      {
        data: udp({ src: PODS.frontend.ip, dst: OUTSIDE_IP, srcPort: 5000, dstPort: 53 }),
        cookie: cookieOf('egressFirewall'),
        at: T0 + 11n * MS,
        rate: HALF,
      },
    );
    await settle();
    expect(run.stdout()).toBe('');
    expect(await run.stop('SIGTERM')).toBe(0);
    const records = jsonLines<Line>(run.stdout());
    expect(records.map((record) => record.type)).toEqual(['flow', 'flow', 'flow', 'flow', 'interval']);
    const [ping, http, https, dns, interval] = records as [Line, Line, Line, Line, Line];
    expect(ping).toMatchObject({
      version: 1,
      verdict: 'drop',
      message: 'Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop',
      src: { kind: 'pod', ip: PODS.client.ip, namespace: 'tenant-b', name: 'client', network: 'default' },
      dst: { kind: 'pod', ip: PODS.backend.ip, namespace: 'shop', name: 'backend' },
      network: 'ipv4',
      protocol: 1,
      icmpType: 8,
      icmpCode: 0,
      sampledPackets: 2,
      samples: 4,
      packets: 2,
      firstSeen: '2025-06-15T15:06:40.123Z',
      lastSeen: '2025-06-15T15:06:41.123Z',
    });
    expect(ping).not.toHaveProperty('dstPort');
    // The chain is watch --format json's, byte for byte.
    expect(ping.chain).toEqual([
      expect.objectContaining({
        verdict: 'pass',
        policy: 'anp:pass-monitoring',
        samples: 1,
        event: expect.objectContaining({ app: 'acl-new' }),
      }),
      expect.objectContaining({ verdict: 'drop', policy: 'isolation:shop', samples: 1 }),
    ]);
    expect(http).toMatchObject({
      verdict: 'allow',
      src: { kind: 'pod', name: 'frontend' },
      dst: { kind: 'pod', name: 'backend' },
      protocol: 6,
      dstPort: 80,
      sampledPackets: 2,
      samples: 2,
      packets: 200,
    });
    expect(http).not.toHaveProperty('icmpType');
    expect(https).toMatchObject({ protocol: 6, dstPort: 443, sampledPackets: 1, packets: 2 });
    expect(dns).toMatchObject({ verdict: 'drop', dst: { kind: 'external', ip: OUTSIDE_IP }, protocol: 17, dstPort: 53, packets: 2 });
    expect(interval).toMatchObject({
      flows: 4,
      sampledPackets: 6,
      samples: 8,
      packets: 206,
      overflow: { sampledPackets: 0, samples: 0, packets: 0 },
    });
    // The interval runs from the start to the stop, and every flow record says so.
    expect(Date.parse(interval.end as string) - Date.parse(interval.start as string)).toBeGreaterThan(400);
    for (const record of records) expect([record.start, record.end]).toEqual([interval.start, interval.end]);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ received: 8, packets: 6, shown: 6, filtered: 0, flowRecords: 4, flowOverflow: 0 });
    expect(summary.msg).toMatch(
      /^summary: 8 samples received \(6 packets\), 6 aggregated into 4 flow records \(0 sampled packets in none: the flow table was full\), 0 filtered out; /,
    );
  });

  it('ends intervals on multiples of their length, without being stopped; filters apply before aggregation', async () => {
    const run = watch(['--aggregate', '1', '--action', 'drop']);
    await run.listening;
    send(...passThenDrop(10, T0), {
      data: icmpEcho({ src: PODS.frontend.ip, dst: PODS.backend.ip, seq: 11 }),
      cookie: cookieOf('allowFrontend'),
      at: T0 + MS,
    });
    const deadline = Date.now() + 10_000;
    while (!jsonLines<Line>(run.stdout()).some((record) => record.type === 'interval' && record.flows === 1) && Date.now() < deadline)
      await settle(100);
    expect(await run.stop('SIGTERM')).toBe(0);
    const records = jsonLines<Line>(run.stdout());
    const flows = records.filter((record) => record.type === 'flow');
    expect(flows).toEqual([expect.objectContaining({ verdict: 'drop', sampledPackets: 1, samples: 2 })]);
    const intervals = records.filter((record) => record.type === 'interval');
    // Every interval but the last (the stop's) ends on a whole second.
    for (const interval of intervals.slice(0, -1)) expect(Date.parse(interval.end as string) % 1000).toBe(0);
    for (let i = 1; i < intervals.length; i++) expect(intervals[i]!.start).toBe(intervals[i - 1]!.end);
    expect(intervals.reduce((sum, interval) => sum + (interval.sampledPackets as number), 0)).toBe(1);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ packets: 2, shown: 1, filtered: 1, flowRecords: 1 });
  });

  it('--aggregate-max-flows: flows past the cap are counted as overflow, in the interval record, the summary and the metrics', async () => {
    const port = await freePort();
    const run = watch(['--aggregate', '1', '--aggregate-max-flows', '2', '--metrics', `127.0.0.1:${port}`]);
    await run.listening;
    // Four flows (ports 1-4) in one burst, port 1 twice: two fit, the packets of ports 3 and 4 overflow.
    const tcp = (srcPort: number, dstPort: number, at: bigint): Sample => ({
      data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort, dstPort }),
      cookie: cookieOf('allowFrontend'),
      at,
      rate: HALF,
    });
    send(
      tcp(40_000, 1, T0),
      tcp(40_001, 1, T0 + MS),
      tcp(40_002, 2, T0 + 2n * MS),
      tcp(40_003, 3, T0 + 3n * MS),
      tcp(40_004, 4, T0 + 4n * MS),
    );
    const deadline = Date.now() + 10_000;
    const full = (): Line | undefined =>
      jsonLines<Line>(run.stdout()).find((record) => record.type === 'interval' && record.sampledPackets !== 0);
    while (full() === undefined && Date.now() < deadline) await settle(100);
    expect(full()).toMatchObject({
      flows: 2,
      sampledPackets: 5,
      samples: 5,
      packets: 10,
      overflow: { sampledPackets: 2, samples: 2, packets: 4 },
    });
    expect(
      jsonLines<Line>(run.stdout())
        .filter((record) => record.type === 'flow')
        .map((record) => [record.dstPort, record.sampledPackets]),
    ).toEqual([
      [1, 2],
      [2, 1],
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^ovn_psample_flow_overflow_packets_total 2$/m);
    expect(metrics).toMatch(/^ovn_psample_flow_records_total 2$/m);
    expect(await run.stop('SIGTERM')).toBe(0);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ shown: 5, flowRecords: 2, flowOverflow: 2 });
  });

  it('a reader of stdout that goes away ends the watch cleanly at the next interval, with its summary', async () => {
    const run = watch(['--aggregate', '1']);
    await run.listening;
    await new Promise<void>((resolve) => run.child.stdout!.once('data', () => resolve()));
    run.child.stdout!.destroy();
    expect(await run.exited).toBe(0);
    expect(run.records().map((record) => record.msg)).toEqual(
      expect.arrayContaining(['the output was closed; stopping', expect.stringMatching(/^summary: /)]),
    );
  });

  it('a reader of stdout that stops reading holds the records back, not the counting: when it reads again every record is whole', async () => {
    // Thousands of flows of a few hundred bytes each: more than a pipe holds.
    const run = watch(['--aggregate', '1', '--aggregate-max-flows', '100000']);
    run.child.stdout!.pause();
    const deadline = Date.now() + 20_000;
    await run.listening;
    const FLOWS = 3000;
    for (let i = 0; i < FLOWS; i++) {
      send({
        data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 30_000 + i, dstPort: 1 + i }),
        cookie: cookieOf('allowFrontend'),
        at: T0 + BigInt(i) * MS,
      });
    }
    // Nobody reads for two intervals.
    await settle(2500);
    run.child.stdout!.resume();
    // While it streams, a chunk of the pipe can end inside a record: only whole lines are counted.
    const counted = (): number =>
      jsonLines<Line>(run.stdout().slice(0, run.stdout().lastIndexOf('\n') + 1))
        .filter((record) => record.type === 'interval')
        .reduce((sum, record) => sum + (record.sampledPackets as number), 0);
    while (counted() < FLOWS && Date.now() < deadline + 20_000) await settle(100);
    expect(await run.stop('SIGTERM')).toBe(0);
    const records = jsonLines<Line>(run.stdout());
    expect(records.filter((record) => record.type === 'flow')).toHaveLength(FLOWS);
    expect(new Set(records.filter((record) => record.type === 'flow').map((record) => record.dstPort)).size).toBe(FLOWS);
    expect(counted()).toBe(FLOWS);
    expect(run.stderr()).toMatch(/"flowRecords":3000/);
  });

  it.each([
    [['--format', 'human'], /--aggregate writes JSON flow records, not --format human/],
    [['--format', 'observ'], /not --format observ/],
    [['--log-cookie'], /--log-cookie and --print-full-packet shape the observ format, which --aggregate does not write/],
    [['--pcapng', '-'], /--pcapng - takes stdout, where --aggregate writes its records/],
  ])('refuses --aggregate with %j before opening anything (exit 2)', async (extra, message) => {
    const run = watch(['--aggregate', '60', ...extra]);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(message);
    expect(run.records().some((record) => String(record.msg).startsWith('listening'))).toBe(false);
  });

  it.each([
    [['--aggregate', '0'], /--aggregate 0: give a whole number from 1 to 86400/],
    [['--aggregate', '60', '--aggregate-max-flows', 'many'], /--aggregate-max-flows many: give a whole number/],
    [['--aggregate-max-flows', '10'], /--aggregate-max-flows caps the flows of --aggregate: add --aggregate SECONDS/],
  ])('refuses %j (exit 2)', async (args, message) => {
    const run = watch(args);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(message);
  });

  it('takes --format json, which its records are', async () => {
    const run = watch(['--aggregate', '60', '--format', 'json', '--duration', '1']);
    expect(await run.exited).toBe(0);
    expect(jsonLines<Line>(run.stdout()).map((record) => record.type)).toEqual(['interval']);
  });
});

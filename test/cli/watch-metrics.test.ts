import { expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { encodePsample, OvnPsampleMetrics, type NetworkEvent } from '../../src/index';
import { fileNetns } from '../support/netns';
import { freePort } from '../support/ovsdb-server';
import { startCli } from '../support/cli';
import { icmpEcho } from './support/frames';
import { cookieOf, PODS, useOvnkNode } from './support/ovnk-node';
import { startPrometheus } from './support/prometheus';

const ns = fileNetns('ovnps-watch-metrics');
const GROUP = 15;

const node = useOvnkNode(ns, GROUP);

it('watch --metrics: a real Prometheus scrapes samples, drops, decode outcomes, connections, mirror sizes and policy denials by namespace', async () => {
  const port = await freePort();
  const run = startCli(node.cliArgs('watch', ['--group', '42', '--metrics', `127.0.0.1:${port}`]));
  await run.listening;
  // Ready once the socket has joined and both OVN databases are synced.
  await run.logged((record) => record.msg === 'ready', 'ready');
  const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect([readyz.status, await readyz.text()]).toEqual([200, 'ready\n']);
  const prometheus = await startPrometheus(`127.0.0.1:${port}`);
  try {
    for (let seq = 1; seq <= 3; seq++) {
      const data = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq });
      node.injector.send(
        encodePsample({ group: 42, proto: 0x800, data, userCookie: cookieOf('anpPass'), timestampNs: BigInt(seq) * 1_000_000_000n }),
      );
      node.injector.send(
        encodePsample({
          group: 42,
          proto: 0x800,
          data,
          userCookie: cookieOf('isolation'),
          timestampNs: BigInt(seq) * 1_000_000_000n + 10_000n,
        }),
      );
    }
    node.injector.send(
      encodePsample({
        group: 42,
        proto: 0x800,
        data: icmpEcho({ src: PODS.frontend.ip, dst: PODS.db.ip, seq: 9 }),
        userCookie: Uint8Array.from(Buffer.from('0200000112345678', 'hex')),
      }),
    );
    node.injector.send(Uint8Array.from([16, 0, 0, 0, 34, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));

    const denials = 'sum by (namespace) (ovn_psample_verdicts_total{action="drop",owner_type="NetpolNamespace"})';
    // Scraped every second: wait for a scrape after the last sample.
    const deadline = Date.now() + 30_000;
    while ((await prometheus.query('ovn_psample_dropped_samples_total{reason="malformed"}')) !== 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(await prometheus.series(denials)).toEqual([{ metric: { namespace: 'shop' }, value: 3 }]);
    expect(
      await prometheus.query(
        'ovn_psample_verdicts_total{action="pass",owner_type="AdminNetworkPolicy",policy="pass-monitoring",direction="Ingress"}',
      ),
    ).toBe(3);
    expect(await prometheus.query('ovn_psample_samples_total{group="42",app="acl-new"}')).toBe(7);
    expect(await prometheus.query('ovn_psample_decodes_total{outcome="stale",reason="sample-not-found"}')).toBe(1);
    expect(await prometheus.query('ovn_psample_decodes_total{outcome="decoded"}')).toBe(6);
    expect(await prometheus.query('ovn_psample_dropped_samples_total{reason="malformed"}')).toBe(1);
    expect(await prometheus.query('ovn_psample_dropped_samples_total{reason="kernel"}')).toBe(0);
    expect(await prometheus.query('ovn_psample_dropped_samples_total{reason="rejected-sender"}')).toBe(0);
    expect(await prometheus.query('ovn_psample_family_gaps_total')).toBe(0);
    expect(await prometheus.query('ovn_psample_database_connected{database="OVN_Northbound"}')).toBe(1);
    expect(await prometheus.query('ovn_psample_database_connected{database="OVN_Southbound"}')).toBe(1);
    expect(await prometheus.query('ovn_psample_mirror_rows{database="OVN_Northbound",table="Logical_Switch_Port"}')).toBe(6);
  } finally {
    await prometheus.stop();
    expect(await run.stop('SIGINT')).toBe(0);
  }
});

it('OvnPsampleMetrics in a service that runs prom-client: its own registry, the namespace and policy labels capped with "other"', async () => {
  const registry = new Registry();
  const metrics = new OvnPsampleMetrics({ registry, prefix: 'svc_', maxLabelValues: 2 });
  // Sampled 1 in 10 packets (tc's act_sample): each stands for 10.
  const denial = (namespace: string): NetworkEvent =>
    ({
      group: 1,
      samples: [{ rate: 10, probability: false }],
      chain: [
        {
          verdict: 'drop',
          policy: `isolation:${namespace}`,
          samples: 1,
          text: '',
          event: { app: 'acl-new', owner: { type: 'NetpolNamespace', namespace, direction: 'Ingress' } },
        },
      ],
    }) as unknown as NetworkEvent;
  for (const namespace of ['a', 'b', 'c', 'd', 'a']) metrics.observe(denial(namespace));
  const text = await registry.getSingleMetricAsString('svc_verdicts_total');
  expect(text).toContain(
    'svc_verdicts_total{action="drop",owner_type="NetpolNamespace",namespace="a",policy="isolation:a",direction="Ingress"} 2',
  );
  expect(text).toContain(
    'svc_verdicts_total{action="drop",owner_type="NetpolNamespace",namespace="b",policy="isolation:b",direction="Ingress"} 1',
  );
  expect(text).toContain(
    'svc_verdicts_total{action="drop",owner_type="NetpolNamespace",namespace="other",policy="other",direction="Ingress"} 2',
  );
  const packets = await registry.getSingleMetricAsString('svc_verdict_packets_total');
  expect(packets).toContain(
    'svc_verdict_packets_total{action="drop",owner_type="NetpolNamespace",namespace="a",policy="isolation:a",direction="Ingress"} 20',
  );
  expect(packets).toContain(
    'svc_verdict_packets_total{action="drop",owner_type="NetpolNamespace",namespace="other",policy="other",direction="Ingress"} 20',
  );
});

it('--metrics refuses an address it cannot read, before opening anything (exit 2)', async () => {
  const run = startCli([
    'watch',
    '--source',
    'usersock:34:15',
    '--group',
    '42',
    '--no-enrich',
    '--metrics',
    'nowhere',
    '--log-format',
    'json',
  ]);
  expect(await run.exited).toBe(2);
  expect(run.stderr()).toMatch(/--metrics nowhere: give HOST:PORT, \[IPV6\]:PORT or :PORT/);
});

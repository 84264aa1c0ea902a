import { expect } from 'vitest';
import { freePort } from '../../support/ovsdb-server';
import type { CliProcess } from '../../support/cli';
import { icmpEcho, tcpSyn, udp } from './frames';
import { cookieOf, OUTSIDE_IP, PODS, type NodeSample } from './ovnk-node';

// The traffic the tests that compare a native watch path with the per-packet path send to the
// OVN-Kubernetes-shaped node, and the metric series both paths make.

export const T0 = 1_750_000_000_123_456_789n;
export const MS = 1_000_000n;

export type Sample = NodeSample & { cookie: Uint8Array; at: bigint };

/** A mix of ways: pass then drop (two samples a packet), allowed TCP at two rates, a dropped egress. */
export function traffic(): Sample[] {
  const samples: Sample[] = [];
  for (let i = 0; i < 6; i++) {
    const data = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq: i });
    const at = T0 + BigInt(i * 100) * MS;
    samples.push({ data, cookie: cookieOf('anpPass'), at }, { data, cookie: cookieOf('isolation'), at: at + 20_000n });
    samples.push({
      data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40_000 + i, dstPort: i % 2 === 0 ? 80 : 443 }),
      cookie: cookieOf('allowFrontend'),
      at: at + 5n * MS,
      rate: i % 3 === 0 ? 100 : 0xffffffff,
      probability: i % 3 !== 0,
    });
    samples.push({
      data: udp({ src: PODS.frontend.ip, dst: OUTSIDE_IP, srcPort: 5000 + i, dstPort: 53 }),
      cookie: cookieOf('egressFirewall'),
      at: at + 7n * MS,
      rate: 10,
      probability: false,
    });
  }
  return samples;
}

/** The series the per-packet observe() and the native observeCounts() both make. */
export function packetSeries(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter((line) =>
      /^ovn_psample_(samples_total|verdicts_total|verdict_packets_total|flow_records_total|flow_overflow_packets_total)[{ ]/.test(line),
    )
    .sort();
}

/**
 * One watch (`args`, with --metrics added) over the mixed traffic: the metrics scraped while it
 * runs, then SIGTERM. Its stdout, its packet series and its summary.
 */
export async function watchTrafficOnce(
  start: (args: readonly string[]) => CliProcess,
  send: (...samples: NodeSample[]) => void,
  args: readonly string[],
): Promise<{ stdout: string; metrics: string[]; summary: Record<string, unknown> }> {
  const port = await freePort();
  const run = start([...args, '--metrics', `127.0.0.1:${port}`]);
  await run.listening;
  send(...traffic());
  await new Promise((resolve) => setTimeout(resolve, 800));
  const metrics = packetSeries(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  expect(await run.stop('SIGTERM')).toBe(0);
  const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
  return { stdout: run.stdout(), metrics, summary };
}

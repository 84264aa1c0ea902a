// The lab benchmark's table and verdict line.
import { AGENT_CONSUMER, HEADLINE_CONSUMER, REFERENCE_CONSUMER, WATCH_CONSUMER } from './consumers.mjs';

export const rateLabel = (rate) => (rate === 0 ? 'unpaced' : `${rate}/s`);

const fixed = (value, digits) => (value === undefined ? 'n/a' : value.toFixed(digits));

const COLUMNS = [
  ['scenario', 8, (r) => r.scenario],
  ['offered', 9, (r) => rateLabel(r.rate)],
  ['consumer', 9, (r) => r.consumer],
  ['actual/s', 8, (r) => fixed(r.achievedRate, 0)],
  ['generated', 9, (r) => String(r.generated)],
  ['received', 9, (r) => String(r.received)],
  ['k.drops', 8, (r) => String(r.kernelDrops)],
  ['q.drops', 8, (r) => String(r.queueDrops)],
  ['left', 7, (r) => String(r.left)],
  ['loss', 6, (r) => fixed(r.loss, 3)],
  ['cpu_s', 7, (r) => fixed(r.cpuSeconds, 2)],
  ['us/sample', 9, (r) => fixed(r.cpuPerSampleUs, 1)],
  ['xC', 6, (r) => fixed(r.cpuRatio, 2)],
  ['rss_MB', 7, (r) => fixed(r.peakRssMb, 0)],
  // What it wrote per sample: under TCG every byte written costs (a copy, and a zeroed page per 4 KiB).
  ['out_B', 6, (r) => fixed(r.outputBytesPerSample, 0)],
  ['drain_s', 8, (r) => (r.drainCapped ? `>${r.drainCapSeconds}` : fixed(r.drainSeconds, 2))],
];

function row(cells) {
  return cells.map((cell, i) => (i < 3 ? cell.padEnd(COLUMNS[i][1]) : cell.padStart(COLUMNS[i][1]))).join(' ');
}

export function describeRun(run) {
  if (run.error) return `${run.scenario} ${rateLabel(run.rate)} ${run.consumer}: FAILED: ${run.error}`;
  return row(COLUMNS.map(([, , cell]) => cell(run)));
}

/** Each run's CPU per sample against the C reader's in the same scenario, rate and round. */
export function addRatios(runs) {
  for (const run of runs) {
    const reference = runs.find(
      (r) => r.scenario === run.scenario && r.rate === run.rate && r.round === run.round && r.consumer === REFERENCE_CONSUMER,
    );
    if (run.cpuPerSampleUs !== undefined && reference?.cpuPerSampleUs) run.cpuRatio = run.cpuPerSampleUs / reference.cpuPerSampleUs;
  }
}

export function tableLines(runs) {
  return [row(COLUMNS.map(([title]) => title)), ...runs.map(describeRun)];
}

/** Where each ovn-psample consumer's CPU went, per sample: its JavaScript thread, its reader thread, the rest. */
export function threadLines(runs) {
  const split = runs.filter((r) => r.threadCpuPerSampleUs !== undefined && r.consumer !== REFERENCE_CONSUMER);
  if (split.length === 0) return [];
  return [
    'CPU per sample by thread (us): main (JavaScript) / psample-reader / other (V8, libuv helpers)',
    ...split.map((r) => {
      const t = r.threadCpuPerSampleUs;
      return `  ${r.scenario.padEnd(4)} ${rateLabel(r.rate).padEnd(8)} ${r.consumer.padEnd(9)} ${fixed(t.main, 1)} / ${fixed(t['psample-reader'], 1)} / ${fixed(t.other, 1)}`;
    }),
  ];
}

/**
 * Where a run's `left` samples were, by the consumer's own count at exit: taken from its socket
 * and still queued inside it (closeDiscards: it was behind, or stuck), or never received at all
 * (the kernel made them, and no socket counter saw them go). Counted from SIGTERM, so a backlog
 * it went on reading after the figures were taken shows as received.
 */
export function leftLines(runs) {
  const lines = runs
    .filter((r) => r.left > 0 && r.selfReported !== undefined && r.selfReported !== null)
    .map((r) => {
      const own = r.selfReported;
      const discards = own.closeDiscards === undefined ? 'n/a' : String(own.closeDiscards);
      return (
        `  ${r.scenario.padEnd(4)} ${rateLabel(r.rate).padEnd(8)} ${r.consumer.padEnd(9)} left ${r.left}: its own count at exit: ` +
        `received ${own.received}, kernel drops ${own.kernelDrops}, queue drops ${own.queueDrops}, unread at exit ${discards}; ` +
        `never received: ${Math.max(0, r.generated - own.received - own.kernelDrops - own.queueDrops - (own.closeDiscards ?? 0))}`
      );
    });
  return lines.length === 0 ? [] : ["Samples left: where the consumer says they were (its exit summary's counts)", ...lines];
}

function median(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const worst = (values) => (values.length === 0 ? undefined : Math.max(...values));

/**
 * RESULT: the headline consumer (listen --format json with the OVN decoder) on OVN ACL samples:
 * CPU per sample over the C reader's at 2,000/s and 10,000/s (the median of the rounds), both
 * losses unpaced and the headline's drain after the burst at 10,000/s (the worst of the rounds);
 * then the same of `watch --format json` (WATCH_CONSUMER) at 10,000/s and 30,000/s, its loss
 * unpaced and its drains; then the agent's (AGENT_CONSUMER, the DaemonSet's watch --aggregate)
 * ratios at 10,000/s and 30,000/s and its loss unpaced. Lines to print before it say what is a bound.
 */
export function verdict(runs) {
  const all = (consumer, rate, field) =>
    runs
      .filter((r) => r.scenario === 'ovn' && r.rate === rate && r.consumer === consumer && !r.error && r[field] !== undefined)
      .map((r) => r[field]);
  const drained = runs.filter((r) => r.scenario === 'ovn' && r.rate === 10000 && r.consumer === HEADLINE_CONSUMER && !r.error);
  const result = {
    cpu_ratio_2k: median(all(HEADLINE_CONSUMER, 2000, 'cpuRatio')),
    cpu_ratio_10k: median(all(HEADLINE_CONSUMER, 10000, 'cpuRatio')),
    loss_ours_unpaced: worst(all(HEADLINE_CONSUMER, 0, 'loss')),
    loss_ref_unpaced: worst(all(REFERENCE_CONSUMER, 0, 'loss')),
    drain_s: worst(all(HEADLINE_CONSUMER, 10000, 'drainSeconds')),
    watch_ratio_10k: median(all(WATCH_CONSUMER, 10000, 'cpuRatio')),
    watch_ratio_30k: median(all(WATCH_CONSUMER, 30000, 'cpuRatio')),
    watch_loss_unpaced: worst(all(WATCH_CONSUMER, 0, 'loss')),
    watch_drain_10k_s: worst(all(WATCH_CONSUMER, 10000, 'drainSeconds')),
    watch_drain_30k_s: worst(all(WATCH_CONSUMER, 30000, 'drainSeconds')),
    agent_ratio_10k: median(all(AGENT_CONSUMER, 10000, 'cpuRatio')),
    agent_ratio_30k: median(all(AGENT_CONSUMER, 30000, 'cpuRatio')),
    agent_loss_unpaced: worst(all(AGENT_CONSUMER, 0, 'loss')),
  };
  const digits = {
    cpu_ratio_2k: 2,
    cpu_ratio_10k: 2,
    loss_ours_unpaced: 4,
    loss_ref_unpaced: 4,
    drain_s: 2,
    watch_ratio_10k: 2,
    watch_ratio_30k: 2,
    watch_loss_unpaced: 4,
    watch_drain_10k_s: 2,
    watch_drain_30k_s: 2,
    agent_ratio_10k: 2,
    agent_ratio_30k: 2,
    agent_loss_unpaced: 4,
  };
  const capped = (consumer, rates) =>
    runs.some((r) => r.scenario === 'ovn' && rates.includes(r.rate) && r.consumer === consumer && !r.error && r.drainCapped);
  const notes = [
    ...(drained.some((r) => r.drainCapped)
      ? [`drain_s is a lower bound: ${HEADLINE_CONSUMER} had not printed every sample when the drain cap ended its run (--drain-cap)`]
      : []),
    ...(capped(WATCH_CONSUMER, [10000, 30000])
      ? [`watch_drain_*_s are lower bounds: ${WATCH_CONSUMER} had not printed every sample when the drain cap ended its run`]
      : []),
  ];
  const line = `RESULT ${Object.entries(result)
    .map(([key, value]) => `${key}=${fixed(value, digits[key])}`)
    .join(' ')}`;
  return { result, notes, line };
}

import { Counter, Gauge, Registry } from 'prom-client';
import { packetsStoodFor } from '../events/event-samples';
import type { FlowInterval } from '../events/flow-aggregator';
import type { FlowSubject, NetworkEvent, VerdictStep } from '../events/network-event';
import type { OvnDecoderStats } from '../ovn/decode-stats';
import type { PsampleStats } from '../psample/types';
import { IPFIX_LEVELS, IPFIX_STATS, type IpfixStatName, type IpfixStats } from '../ipfix/stats';

/** Distinct values a free-form label (namespace, policy) takes before the rest read "other". */
export const DEFAULT_MAX_LABEL_VALUES = 200;
export const OTHER_LABEL = 'other';

export interface OvnPsampleMetricsOptions {
  /** The registry to register in; a service that already runs prom-client passes its own. Default: a new one. */
  readonly registry?: Registry;
  /** Default "ovn_psample_". */
  readonly prefix?: string;
  /** Cap on the values of each free-form label. */
  readonly maxLabelValues?: number;
}

/** What the metrics read when scraped: the socket's and the decoder's counters, connection and mirror state. */
export interface MetricsSources {
  socketStats?(): PsampleStats | undefined;
  /** The IPFIX source's counts, when the samples come from OVS IPFIX. */
  ipfixStats?(): IpfixStats | undefined;
  decoderStats?(): OvnDecoderStats | undefined;
  /** database name -> connected. */
  connections?(): ReadonlyMap<string, boolean>;
  /** "database/table" -> rows held. */
  mirrorSizes?(): ReadonlyMap<string, number>;
}

/** Keeps a label's cardinality bounded: the first `max` values are kept, later ones become "other". */
class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  value(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER_LABEL;
    this.seen.add(value);
    return value;
  }
}

/** Increments of one series, summed between scrapes. */
interface Pending<L extends string> {
  readonly labels: Partial<Record<L, string>>;
  count: number;
}

type VerdictLabel = 'action' | 'owner_type' | 'namespace' | 'policy' | 'direction';

/** The series a step counts into: its samples' per psample group, its verdict's, and the packets its verdict stands for. */
interface StepSeries {
  readonly app: string;
  readonly samples: Map<number, Pending<'group' | 'app'>>;
  readonly verdict: Pending<VerdictLabel>;
  readonly verdictPackets: Pending<VerdictLabel>;
}

/**
 * Counts per series as plain numbers, handed to prom-client when it is read (`collect`): a
 * counter's inc() hashes and checks its label object, which per packet cost more than grouping
 * the packet's samples. Series are kept by label values, so steps that say the same (and chains
 * made again after the decoder changed) share them.
 */
class SeriesTotals<L extends string> {
  readonly #series = new Map<string, Pending<L>>();

  series(labels: Partial<Record<L, string>>): Pending<L> {
    const key = JSON.stringify(labels);
    let series = this.#series.get(key);
    if (series === undefined) this.#series.set(key, (series = { labels, count: 0 }));
    return series;
  }

  flush(counter: Counter<L>): void {
    for (const series of this.#series.values()) {
      if (series.count === 0) continue;
      counter.inc(series.labels, series.count);
      series.count = 0;
    }
  }
}

/** Feeds a counter from a monotonic total read at scrape time. */
class TotalsSince {
  private readonly last = new Map<string, number>();

  add(counter: Counter<string>, labels: Record<string, string>, total: number): void {
    const key = JSON.stringify(labels);
    const delta = total - (this.last.get(key) ?? 0);
    // inc(0) creates the series: a reason that never happened still reads 0, not absent.
    if (delta >= 0) counter.inc(labels, delta);
    this.last.set(key, total);
  }
}

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * One metric per count of IPFIX_STATS, named after it (`ipfix_records_total`,
 * `ipfix_sequence_lost_total`, …; `ipfix_pending` and `ipfix_queued` are gauges), with its
 * description as help: the list in src/ipfix/stats.ts is the one source. Series appear once the
 * IPFIX source is read.
 */
function registerIpfixMetrics(registry: Registry, prefix: string, read: () => IpfixStats | undefined): void {
  for (const [name, help] of Object.entries(IPFIX_STATS) as [IpfixStatName, string][]) {
    const metric = `${prefix}ipfix_${snakeCase(name)}`;
    if (IPFIX_LEVELS.has(name)) {
      const gauge: Gauge = new Gauge({
        name: metric,
        help: `IPFIX source: ${help}`,
        registers: [registry],
        collect() {
          const stats = read();
          if (stats !== undefined) gauge.set(stats[name]);
        },
      });
    } else {
      // Keyed by labels: each counter needs its own.
      const totals = new TotalsSince();
      const counter: Counter = new Counter({
        name: `${metric}_total`,
        help: `IPFIX source: ${help}`,
        registers: [registry],
        collect() {
          const stats = read();
          if (stats !== undefined) totals.add(counter, {}, stats[name]);
        },
      });
    }
  }
}

/**
 * Prometheus metrics of a watch, with prom-client: samples by group and app, drops by reason,
 * decode outcomes by reason, database connection state, mirror sizes, and verdicts by action,
 * owner type, namespace, policy and direction ("network policy denials by namespace"), counted
 * once per sampled packet and as the packets on the wire it stands for, with the
 * namespace and policy labels capped (beyond the cap: "other").
 */
export class OvnPsampleMetrics {
  readonly registry: Registry;
  private readonly sampleSeries = new SeriesTotals<'group' | 'app'>();
  private readonly beforeScrapeHooks: (() => void)[] = [];
  private readonly verdictSeries = new SeriesTotals<VerdictLabel>();
  private readonly verdictPacketSeries = new SeriesTotals<VerdictLabel>();
  // Chains and their steps are shared by every packet that takes the same way (src/events/verdict-chains.ts).
  private readonly stepSeries = new WeakMap<VerdictStep, StepSeries>();
  private readonly flowRecords: Counter;
  private readonly flowOverflow: Counter;
  private readonly namespaces: BoundedLabel;
  private readonly policies: BoundedLabel;

  constructor(options: OvnPsampleMetricsOptions = {}, sources: MetricsSources = {}) {
    const prefix = options.prefix ?? 'ovn_psample_';
    const registry = (this.registry = options.registry ?? new Registry());
    const max = options.maxLabelValues ?? DEFAULT_MAX_LABEL_VALUES;
    this.namespaces = new BoundedLabel(max);
    this.policies = new BoundedLabel(max);
    const sampleSeries = this.sampleSeries;
    const beforeScrapeHooks = this.beforeScrapeHooks;
    const samples: Counter<'group' | 'app'> = new Counter({
      name: `${prefix}samples_total`,
      help: 'psample samples received, by psample group and OVN sampling application',
      labelNames: ['group', 'app'],
      registers: [registry],
      // Registered first, so read first: what a source held back is counted before any series is read.
      collect() {
        for (const hook of beforeScrapeHooks) hook();
        sampleSeries.flush(samples);
      },
    });
    const verdictSeries = this.verdictSeries;
    const verdicts: Counter<VerdictLabel> = new Counter({
      name: `${prefix}verdicts_total`,
      help: `Verdicts of sampled packets, one per step of each verdict chain; namespace and policy keep ${max} values each, then "${OTHER_LABEL}"`,
      labelNames: ['action', 'owner_type', 'namespace', 'policy', 'direction'],
      registers: [registry],
      collect() {
        verdictSeries.flush(verdicts);
      },
    });
    const verdictPacketSeries = this.verdictPacketSeries;
    const verdictPackets: Counter<VerdictLabel> = new Counter({
      name: `${prefix}verdict_packets_total`,
      help: "Packets on the wire the sampled packets stand for, by the labels of verdicts_total: each sampled packet counts its sampling's weight (psample's rate or probability, IPFIX's packetDeltaCount)",
      labelNames: ['action', 'owner_type', 'namespace', 'policy', 'direction'],
      registers: [registry],
      collect() {
        verdictPacketSeries.flush(verdictPackets);
      },
    });
    this.flowRecords = new Counter({
      name: `${prefix}flow_records_total`,
      help: 'Flow records written by watch --aggregate (one per flow and interval)',
      registers: [registry],
    });
    this.flowOverflow = new Counter({
      name: `${prefix}flow_overflow_packets_total`,
      help: 'Sampled packets watch --aggregate counted but put in no flow record: their interval already held --aggregate-max-flows flows',
      registers: [registry],
    });
    const totals = new TotalsSince();
    const drops: Counter<'reason'> = new Counter({
      name: `${prefix}dropped_samples_total`,
      help: 'Samples lost or rejected before decoding: kernel (socket buffer full), queue (reader queue full), malformed, rejected-sender (a userspace process posing as the kernel)',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        const stats = sources.socketStats?.();
        if (stats === undefined) return;
        totals.add(drops, { reason: 'kernel' }, stats.kernelDrops);
        totals.add(drops, { reason: 'queue' }, stats.queueDrops);
        totals.add(drops, { reason: 'malformed' }, stats.malformed);
        totals.add(drops, { reason: 'rejected-sender' }, stats.rejectedSender);
      },
    });
    const gaps: Counter = new Counter({
      name: `${prefix}family_gaps_total`,
      help: 'Times the psample family was unregistered under the socket (module reload, OVS upgrade): no sample could arrive until it registered again',
      registers: [registry],
      collect() {
        const stats = sources.socketStats?.();
        if (stats !== undefined) totals.add(gaps, {}, stats.familyGaps);
      },
    });
    registerIpfixMetrics(registry, prefix, () => sources.ipfixStats?.());
    const decodes: Counter<'outcome' | 'reason'> = new Counter({
      name: `${prefix}decodes_total`,
      help: 'Cookies decoded through OVN, by outcome (decoded, stale, unknown) and reason',
      labelNames: ['outcome', 'reason'],
      registers: [registry],
      collect() {
        const stats = sources.decoderStats?.();
        if (stats === undefined) return;
        totals.add(decodes, { outcome: 'decoded', reason: '' }, stats.decoded);
        for (const [reason, count] of Object.entries(stats.stale)) totals.add(decodes, { outcome: 'stale', reason }, count);
        for (const [reason, count] of Object.entries(stats.unknown)) totals.add(decodes, { outcome: 'unknown', reason }, count);
      },
    });
    const connected: Gauge<'database'> = new Gauge({
      name: `${prefix}database_connected`,
      help: '1 while the OVSDB connection to the database is up',
      labelNames: ['database'],
      registers: [registry],
      collect() {
        for (const [database, up] of sources.connections?.() ?? []) connected.set({ database }, up ? 1 : 0);
      },
    });
    const mirror: Gauge<'database' | 'table'> = new Gauge({
      name: `${prefix}mirror_rows`,
      help: 'Rows held in the in-memory mirror of each database table',
      labelNames: ['database', 'table'],
      registers: [registry],
      collect() {
        for (const [key, rows] of sources.mirrorSizes?.() ?? []) {
          const slash = key.indexOf('/');
          mirror.set({ database: key.slice(0, slash), table: key.slice(slash + 1) }, rows);
        }
      },
    });
  }

  /** Counts one packet: its samples by group and app, and each step's verdict, once and as the packets it stands for. */
  /**
   * Calls `hook` as each scrape begins, before any series is read: a source that sums its counts
   * and hands them on from time to time (watch --aggregate's native flows) hands them on then.
   */
  beforeEachScrape(hook: () => void): void {
    this.beforeScrapeHooks.push(hook);
  }

  observe(event: NetworkEvent): void {
    this.observeCounts(event, 1, packetsStoodFor(event));
  }

  /**
   * Counts `sampledPackets` packets that went the way `subject` says (watch --aggregate's native
   * flows: src/events/native-flows.ts), standing for `packets` packets on the wire: the series
   * and values observe() gives them one by one.
   */
  observeCounts(subject: Pick<FlowSubject, 'chain' | 'group'>, sampledPackets: number, packets: number): void {
    const group = subject.group;
    for (const step of subject.chain) {
      let series = this.stepSeries.get(step);
      if (series === undefined) this.stepSeries.set(step, (series = this.seriesOf(step)));
      let samples = series.samples.get(group);
      if (samples === undefined) series.samples.set(group, (samples = this.sampleSeries.series({ group: String(group), app: series.app })));
      samples.count += step.samples * sampledPackets;
      series.verdict.count += sampledPackets;
      series.verdictPackets.count += packets;
    }
  }

  private seriesOf(step: VerdictStep): StepSeries {
    const owner = step.event?.owner;
    const labels = {
      action: step.verdict,
      owner_type: owner?.type ?? (step.event?.flow !== undefined ? 'LogicalFlow' : 'none'),
      namespace: this.namespaces.value(owner?.namespace ?? ''),
      policy: this.policies.value(owner === undefined ? step.policy : (owner.name ?? step.policy)),
      direction: owner?.direction ?? '',
    };
    return {
      app: step.event?.app ?? 'unknown',
      samples: new Map(),
      verdict: this.verdictSeries.series(labels),
      verdictPackets: this.verdictPacketSeries.series(labels),
    };
  }

  /** Counts one interval of watch --aggregate: its flow records and the sampled packets that overflowed its table. */
  observeFlowInterval(interval: FlowInterval): void {
    this.flowRecords.inc(interval.flows.length);
    this.flowOverflow.inc(interval.overflow.sampledPackets);
  }
}

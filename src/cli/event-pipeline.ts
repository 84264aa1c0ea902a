import type { Logger } from 'pino';
import { NetworkEventAssembler } from '../events/event-assembler';
import type { OvnDecoderStats } from '../ovn/decode-stats';
import { openIpfix, type IpfixSource } from '../ipfix/source';
import type { OpenIpfixOptions } from '../ipfix/options';
import type { IpfixStats } from '../ipfix/stats';
import { dropPrivileges } from '../psample/privileges';
import { openPsample, type PsampleSocket } from '../psample/socket';
import type { OpenPsampleOptions, PsampleStats } from '../psample/types';
import { InterfaceNames } from '../ovs/interface-names';
import type { MetricsSources } from '../metrics/metrics';
import { describePrivileges } from './privileges-text';
import { startCollectorSession, type CollectorSession, type CollectorSessionOptions } from './collector-session';
import { findOvnRemotes, startOvnSession, type OvnSession, type OvnSessionOptions } from './ovn-session';

export interface PipelineOptions {
  /** The socket's options but its groups, which the collector session decides. */
  readonly socket: Omit<OpenPsampleOptions, 'groups' | 'signal'>;
  /** The IPFIX source's, with --source ipfix or auto. */
  readonly ipfix?: OpenIpfixOptions;
  readonly collector: CollectorSessionOptions;
  /** Undefined with --no-enrich. */
  readonly ovn: OvnSessionOptions | undefined;
  readonly groupWindowMs: number;
  /** The caller takes the psample socket's batches itself (watch --aggregate's native flows): the assembler gets none of them. */
  readonly ownPsampleBatches?: boolean;
}

/** The counts of the source a pipeline reads: one of the two sources' stats(). */
export type SourceStats =
  { readonly source: 'psample'; readonly stats: PsampleStats } | { readonly source: 'ipfix'; readonly stats: IpfixStats };

/** Samples in, NetworkEvents out: the collector set, the OVN mirror, the source and the assembler of a watch or top. */
export interface Pipeline {
  /** The psample socket, unless the samples come from IPFIX. */
  readonly socket: PsampleSocket | undefined;
  /** The IPFIX source, when the samples come from there. */
  readonly ipfix: IpfixSource | undefined;
  readonly assembler: NetworkEventAssembler;
  readonly collector: CollectorSession;
  readonly ovn: OvnSession | undefined;
  readonly interfaces: InterfaceNames;
  readonly metricsSources: MetricsSources;
  /** Readable after close too, with what close() counted. */
  sourceStats(): SourceStats;
  decoderStats(): OvnDecoderStats | undefined;
  /** Why samples may not reach the watch, or not be decoded, now: empty when ready. */
  notReady(): string[];
  /** Stops reading, hands on the packets still being grouped, undoes the collector set, disconnects. */
  close(): Promise<void>;
}

/** Without a northbound database named or on this node, a watch shows cookies only: said once, in the log. */
async function startOvnSessionIfAny(options: OvnSessionOptions, log: Logger): Promise<OvnSession | undefined> {
  const remotes = findOvnRemotes(options);
  if (remotes.nb === undefined) {
    log.warn('no OVN northbound database on this node: showing cookies without their ACL, policy or pods; pass --nb REMOTE to decode them');
    return undefined;
  }
  return startOvnSession({ ...remotes, nb: remotes.nb }, options.ssl, log, { pods: true });
}

export async function startPipeline(options: PipelineOptions, log: Logger): Promise<Pipeline> {
  const collector = await startCollectorSession(options.collector, log, () => openIpfix(options.ipfix));
  let ovn: OvnSession | undefined;
  try {
    ovn = options.ovn === undefined ? undefined : await startOvnSessionIfAny(options.ovn, log);
    const assembler = new NetworkEventAssembler({
      ...(ovn === undefined ? {} : { decoder: ovn.decoder, ...(ovn.pods === undefined ? {} : { pods: ovn.pods }) }),
      groupWindowMs: options.groupWindowMs,
    });
    if (collector.ipfix !== undefined) {
      warnPsampleOnly(options, log);
      return ipfixPipeline(collector.ipfix, assembler, collector, ovn, options.socket.dropPrivileges, log);
    }
    const socket = openPsample({ ...options.socket, ...(collector.groups.length === 0 ? {} : { groups: collector.groups }) });
    if (socket.privileges !== undefined) {
      const { unreachedThreads, ...privileges } = socket.privileges;
      log[unreachedThreads.length === 0 ? 'info' : 'warn'](
        { ...privileges, unreachedThreads: unreachedThreads.map((t) => t.tid) },
        describePrivileges(socket.privileges),
      );
    }
    if (options.ownPsampleBatches !== true) socket.on('batch', (batch) => assembler.pushBatch(batch));
    let inGap = false;
    socket.on('gap', (gap) => {
      inGap = gap.phase === 'start';
    });
    const session = ovn;
    const socketStats = (): PsampleStats => socket.stats();
    log.info(
      {
        groups: collector.groups.length === 0 ? 'all' : collector.groups,
        netlinkFamily: socket.familyId,
        multicastGroup: socket.groupId,
        kernelFilter: socket.kernelFilter,
      },
      `listening to psample group${collector.groups.length === 1 ? '' : 's'} ${collector.groups.length === 0 ? '(all)' : collector.groups.join(', ')}`,
    );
    return {
      socket,
      ipfix: undefined,
      assembler,
      collector,
      ovn,
      interfaces: new InterfaceNames(collector.ovs, options.socket.netns === undefined && options.socket.source === undefined),
      metricsSources: { ...sharedMetricsSources(collector, session), socketStats },
      sourceStats: () => ({ source: 'psample', stats: socket.stats() }),
      decoderStats: () => session?.decoder.stats(),
      notReady() {
        const reasons: string[] = [];
        if (socket.closed) reasons.push('the psample socket is closed');
        else if (inGap) reasons.push('the psample family is unregistered (module reload, OVS upgrade?): waiting to join it again');
        const collectorProblem = collector.problem();
        if (collectorProblem !== undefined) reasons.push(collectorProblem);
        for (const [database, up] of session?.connected ?? []) if (!up) reasons.push(`${database} is disconnected; reconnecting`);
        return reasons;
      },
      async close() {
        socket.close();
        assembler.close();
        try {
          await collector.close();
        } finally {
          await session?.close();
        }
      },
    };
  } catch (error) {
    collector.ipfix?.close();
    await ovn?.close();
    await collector.close();
    throw error;
  }
}

/** --source auto chose IPFIX: the psample socket's options given with it do nothing, which is said once. */
function warnPsampleOnly(options: PipelineOptions, log: Logger): void {
  const { socket, collector } = options;
  const unused = [
    ...(collector.groups.length > 0 ? ['--group'] : []),
    ...(socket.netns === undefined ? [] : ['--netns']),
    ...(socket.listenAllNsid === true ? ['--all-nsid'] : []),
  ];
  if (unused.length > 0)
    log.warn({ ignored: unused }, `${unused.join(', ')} ignored: they shape the psample socket, and --source auto chose IPFIX`);
}

/** What the metrics read of the databases, whichever the source. */
function sharedMetricsSources(collector: CollectorSession, session: OvnSession | undefined): MetricsSources {
  const ovsCache = collector.ovs?.cache;
  return {
    decoderStats: () => session?.decoder.stats(),
    connections: () => session?.connected ?? new Map(),
    mirrorSizes: () => {
      const sizes = session?.pods?.mirrorSizes() ?? new Map<string, number>();
      for (const [table] of ovsCache?.monitoredColumns() ?? []) sizes.set(`Open_vSwitch/${table}`, ovsCache!.table(table).size);
      return sizes;
    },
  };
}

/** The pipeline of an IPFIX source, bound by the collector session: records in, NetworkEvents out. */
function ipfixPipeline(
  ipfix: IpfixSource,
  assembler: NetworkEventAssembler,
  collector: CollectorSession,
  session: OvnSession | undefined,
  dropRequest: OpenPsampleOptions['dropPrivileges'],
  log: Logger,
): Pipeline {
  ipfix.on('batch', (batch) => assembler.pushIpfix(batch));
  // As the psample socket does once it has joined: the socket is bound and the collector set attached.
  if (dropRequest !== undefined && dropRequest !== false) {
    const report = dropPrivileges(dropRequest);
    log[report.unreachedThreads.length === 0 ? 'info' : 'warn'](
      { ...report, unreachedThreads: report.unreachedThreads.map((t) => t.tid) },
      describePrivileges(report),
    );
  }
  const where = `${ipfix.address.includes(':') ? `[${ipfix.address}]` : ipfix.address}:${ipfix.port}`;
  log.info(
    { address: ipfix.address, port: ipfix.port, receiveBufferBytes: ipfix.receiveBufferBytes },
    `listening for OVS IPFIX on UDP ${where}`,
  );
  const ipfixStats = (): IpfixStats => ipfix.stats();
  return {
    socket: undefined,
    ipfix,
    assembler,
    collector,
    ovn: session,
    interfaces: new InterfaceNames(collector.ovs, false),
    metricsSources: { ...sharedMetricsSources(collector, session), ipfixStats },
    sourceStats: () => ({ source: 'ipfix', stats: ipfixStats() }),
    decoderStats: () => session?.decoder.stats(),
    notReady() {
      const reasons: string[] = [];
      if (ipfix.closed) reasons.push(`the IPFIX socket on UDP ${where} is closed`);
      const collectorProblem = collector.problem();
      if (collectorProblem !== undefined) reasons.push(collectorProblem);
      for (const [database, up] of session?.connected ?? []) if (!up) reasons.push(`${database} is disconnected; reconnecting`);
      return reasons;
    },
    async close() {
      ipfix.close();
      assembler.close();
      try {
        await collector.close();
      } finally {
        await session?.close();
      }
    },
  };
}

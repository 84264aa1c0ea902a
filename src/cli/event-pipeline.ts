import type { Logger } from 'pino';
import { NetworkEventAssembler } from '../events/event-assembler';
import type { OvnDecoderStats } from '../ovn/decode-stats';
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
  readonly collector: CollectorSessionOptions;
  /** Undefined with --no-enrich. */
  readonly ovn: OvnSessionOptions | undefined;
  readonly groupWindowMs: number;
}

/** Samples in, NetworkEvents out: the collector set, the OVN mirror, the socket and the assembler of a watch or top. */
export interface Pipeline {
  readonly socket: PsampleSocket;
  readonly assembler: NetworkEventAssembler;
  readonly collector: CollectorSession;
  readonly ovn: OvnSession | undefined;
  readonly interfaces: InterfaceNames;
  readonly metricsSources: MetricsSources;
  socketStats(): PsampleStats;
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
  const collector = await startCollectorSession(options.collector, log);
  let ovn: OvnSession | undefined;
  try {
    ovn = options.ovn === undefined ? undefined : await startOvnSessionIfAny(options.ovn, log);
    const socket = openPsample({ ...options.socket, ...(collector.groups.length === 0 ? {} : { groups: collector.groups }) });
    if (socket.privileges !== undefined) {
      const { unreachedThreads, ...privileges } = socket.privileges;
      log[unreachedThreads.length === 0 ? 'info' : 'warn'](
        { ...privileges, unreachedThreads: unreachedThreads.map((t) => t.tid) },
        describePrivileges(socket.privileges),
      );
    }
    const assembler = new NetworkEventAssembler({
      ...(ovn === undefined ? {} : { decoder: ovn.decoder, ...(ovn.pods === undefined ? {} : { pods: ovn.pods }) }),
      groupWindowMs: options.groupWindowMs,
    });
    socket.on('batch', (batch) => assembler.pushBatch(batch));
    let inGap = false;
    socket.on('gap', (gap) => {
      inGap = gap.phase === 'start';
    });
    const session = ovn;
    // Readable after close too, with what close() counted.
    const socketStats = (): PsampleStats => socket.stats();
    const ovsCache = collector.ovs?.cache;
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
      assembler,
      collector,
      ovn,
      interfaces: new InterfaceNames(collector.ovs, options.socket.netns === undefined && options.socket.source === undefined),
      metricsSources: {
        socketStats,
        decoderStats: () => session?.decoder.stats(),
        connections: () => session?.connected ?? new Map(),
        mirrorSizes: () => {
          const sizes = session?.pods?.mirrorSizes() ?? new Map<string, number>();
          for (const [table] of ovsCache?.monitoredColumns() ?? []) sizes.set(`Open_vSwitch/${table}`, ovsCache!.table(table).size);
          return sizes;
        },
      },
      socketStats,
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
    await ovn?.close();
    await collector.close();
    throw error;
  }
}

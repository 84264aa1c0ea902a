import { Command, Option } from 'commander';
import { BufferedOutput } from '../../output/sink';
import { HumanFormatter } from '../../output/event-human';
import { JsonFormatter } from '../../output/event-json';
import { EventLines } from '../../output/event-lines';
import { ObservFormatter } from '../../output/event-observ';
import { PcapngWriter } from '../../output/pcapng';
import { OvnPsampleMetrics, type MetricsSources } from '../../metrics/metrics';
import { parseListenAddress, serveMetrics } from '../metrics-server';
import { Readiness } from '../readiness';
import { FlowIntervals } from '../flow-intervals';
import { CliUsageError } from '../errors';
import { startPipeline, type Pipeline } from '../event-pipeline';
import { defineCommand } from '../command';
import {
  addAggregateOptions,
  addPipelineOptions,
  aggregateOptions,
  type AggregateFlags,
  addStopOptions,
  eventPredicate,
  groupingDeliveryInterval,
  pipelineOptions,
  stopLimits,
  type PipelineFlags,
  type StopFlags,
} from '../options';
import { runUntilStopped } from '../stop';
import { watchSummary, type WatchCounts } from '../watch-summary';
import { nativeFlowsOf } from '../native-aggregate';
import { nativeEventLinesOf } from '../native-lines';

type WatchFormat = 'human' | 'observ' | 'json';

interface WatchFlags extends PipelineFlags, StopFlags, AggregateFlags {
  format: WatchFormat;
  logCookie?: boolean;
  printFullPacket?: boolean;
  output?: string;
  pcapng?: string;
  metrics?: string;
  color?: boolean;
}

const EXAMPLES = `
Examples:
  ovn-psample watch --add-ovs-collector                 # on an OVN-Kubernetes node, as root
  ovn-psample watch --namespace shop --action drop      # only what policies of namespace shop dropped
  ovn-psample watch --src shop/frontend --format json --output /tmp/frontend.jsonl
  ovn-psample watch --format observ --log-cookie        # ovnkube-observ's lines
  ovn-psample watch --group 42 --nb tcp:192.0.2.10:6641 --sb tcp:192.0.2.10:6642
  ovn-psample watch --aggregate 60 --metrics 0.0.0.0:9479   # always on: a JSON record per flow and minute

Exit status: 0 when stopped (--count, --duration, Ctrl-C, SIGTERM, or the reader of the output
went away), 1 when something failed (the message says what and what to do), 2 for wrong usage.`;

export function watchCommand(): Command {
  const command = new Command('watch').description(
    'one line per packet with its verdict chain: which ACL and which Kubernetes policy allowed or dropped it, between which pods',
  );
  const groups = addPipelineOptions(command);
  command
    .addOption(
      new Option('--format <format>', 'human (aligned columns), observ (ovnkube-observ lines) or json (JSON lines)')
        .choices(['human', 'observ', 'json'])
        .default('human'),
    )
    .option('--log-cookie', 'observ format: also print "group_id=…, obs_domain=…, obs_point=…" (ovnkube-observ -log-cookie)')
    .option('--print-full-packet', 'observ format: print every layer of the packet (ovnkube-observ -print-full-packet)')
    .option('--no-color', 'no colours (there are none unless stdout is a terminal, nor with NO_COLOR set)')
    .option('--output <file>', 'write to FILE instead of stdout')
    .option(
      '--pcapng <file>',
      "also write the packets as pcapng (Wireshark) to FILE, or - for stdout (then text goes only to --output): kernel timestamps, one interface per ingress ifindex, the verdict chain and cookies as each packet's comment",
    )
    .option(
      '--metrics <host:port>',
      'serve Prometheus metrics on http://HOST:PORT/metrics, and /healthz and /readyz for probes, while watching',
    )
    .addHelpText('after', EXAMPLES);
  addAggregateOptions(command);
  addStopOptions(command, 'showing n packets');
  return defineCommand(command, async (flags: WatchFlags, log) => {
    // Every option is checked before anything is opened: a usage error leaves nothing behind.
    const { limit, seconds } = stopLimits(flags);
    flags.deliveryInterval = groupingDeliveryInterval(flags, command.getOptionValueSource('deliveryInterval') === 'cli');
    const aggregate = aggregateOptions(flags, command.getOptionValueSource('format') === 'cli' ? flags.format : undefined);
    // watch --aggregate's psample packets are grouped and summed natively unless --count needs each packet.
    const nativeAggregate = aggregate !== undefined && limit === Infinity;
    // watch's JSON and human psample lines are grouped and written natively unless pcapng needs each packet.
    const nativeLines = aggregate === undefined && flags.format !== 'observ' && flags.pcapng === undefined;
    const options = { ...pipelineOptions(flags, groups), ownPsampleBatches: nativeAggregate || nativeLines };
    const metricsAddress = flags.metrics === undefined ? undefined : parseListenAddress(flags.metrics);
    const accept = eventPredicate(flags);
    if (flags.format !== 'observ' && (flags.logCookie === true || flags.printFullPacket === true)) {
      throw new CliUsageError('--log-cookie and --print-full-packet shape the observ format: add --format observ');
    }

    await runUntilStopped(log, seconds, async (stop) => {
      const readerGone = (error: Error): void => {
        log.info({ err: error.message }, 'the output was closed; stopping');
        stop();
      };
      // Files are opened first: a path that cannot be written fails before a collector set is made.
      const textToStdout = flags.output === undefined && flags.pcapng !== '-';
      const output =
        flags.output !== undefined || textToStdout
          ? new BufferedOutput(textToStdout ? { stream: process.stdout } : { path: flags.output! }, readerGone)
          : undefined;
      const pcapngOutput =
        flags.pcapng === undefined
          ? undefined
          : new BufferedOutput(flags.pcapng === '-' ? { stream: process.stdout } : { path: flags.pcapng }, readerGone);
      const closeOutputs = async (): Promise<void> => {
        await output?.close();
        await pcapngOutput?.close();
      };
      // Served before the pipeline starts: a port in use fails before a collector set is made, and probes see it start.
      let pipeline: Pipeline | undefined;
      const readiness = new Readiness(
        () => pipeline?.notReady() ?? ['starting: the collector set, the databases and the sample source are being set up'],
        log,
      );
      const sources = (): MetricsSources | undefined => pipeline?.metricsSources;
      const metrics =
        metricsAddress === undefined
          ? undefined
          : new OvnPsampleMetrics(
              {},
              {
                socketStats: () => sources()?.socketStats?.(),
                ipfixStats: () => sources()?.ipfixStats?.(),
                decoderStats: () => sources()?.decoderStats?.(),
                connections: () => sources()?.connections?.() ?? new Map(),
                mirrorSizes: () => sources()?.mirrorSizes?.() ?? new Map(),
              },
            );
      let server: Awaited<ReturnType<typeof serveMetrics>> | undefined;
      try {
        if (metrics !== undefined && metricsAddress !== undefined) {
          server = await serveMetrics(metrics.registry, metricsAddress, readiness);
          const base = `http://${metricsAddress.host.includes(':') ? `[${metricsAddress.host}]` : metricsAddress.host}:${metricsAddress.port}`;
          log.info({ metrics: server.address() }, `Prometheus metrics on ${base}/metrics, probes on ${base}/healthz and ${base}/readyz`);
        }
        pipeline = await startPipeline(options, log);
      } catch (error) {
        readiness.close();
        server?.close();
        await closeOutputs();
        throw error;
      }
      const started = pipeline;
      const pcapng =
        pcapngOutput === undefined ? undefined : new PcapngWriter((bytes) => pcapngOutput.write(bytes), started.interfaces.name);
      const color =
        flags.color !== false && flags.output === undefined && process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
      const formatter =
        flags.format === 'json'
          ? new JsonFormatter(started.interfaces.name)
          : flags.format === 'observ'
            ? new ObservFormatter({
                logCookie: flags.logCookie === true,
                printFullPacket: flags.printFullPacket === true,
                enrich: started.ovn !== undefined,
              })
            : new HumanFormatter(color, started.interfaces.name);
      const counts: WatchCounts = { packets: 0, shown: 0, filtered: 0 };
      const flowCounts = { records: 0, overflow: 0 };
      const flows =
        aggregate === undefined
          ? undefined
          : new FlowIntervals(aggregate.seconds, aggregate.maxFlows, output, (interval) => {
              flowCounts.records += interval.flows.length;
              flowCounts.overflow += interval.overflow.sampledPackets;
              metrics?.observeFlowInterval(interval);
            });
      if (flows !== undefined) counts.flows = flowCounts;
      const native =
        flows !== undefined && nativeAggregate && started.socket !== undefined
          ? nativeFlowsOf(
              started,
              flows,
              aggregate.maxFlows,
              flags.port !== undefined,
              options.groupWindowMs,
              aggregate.seconds * 1000,
              counts,
              accept,
              metrics,
              log,
            )
          : undefined;
      const nativeEventLines =
        nativeLines && output !== undefined && started.socket !== undefined
          ? nativeEventLinesOf(
              started,
              output,
              flags.format === 'json' ? { kind: 'json' } : { kind: 'human', color },
              options.groupWindowMs,
              flags.port !== undefined,
              limit,
              counts,
              accept,
              metrics,
              stop,
              log,
            )
          : undefined;
      const lines = output === undefined || flows !== undefined ? undefined : new EventLines(formatter, output);
      readiness.check();
      started.assembler.on('event', (event) => {
        counts.packets++;
        metrics?.observe(event);
        if (counts.shown >= limit) return;
        if (!accept(event)) {
          counts.filtered++;
          return;
        }
        counts.shown++;
        if (flows !== undefined) flows.add(event);
        else lines?.write(event);
        pcapng?.packet(event);
        if (counts.shown >= limit) stop();
      });
      started.socket?.on('drop', (drop) =>
        log.warn({ kind: drop.kind, count: drop.count, total: drop.total }, `${drop.count} sample(s) lost (${drop.kind} drops)`),
      );
      started.ipfix?.on('drop', (drop) =>
        log.warn({ kind: drop.kind, count: drop.count, total: drop.total }, `${drop.count} IPFIX record(s) lost (${drop.kind})`),
      );
      started.ipfix?.on('error', (error) => stop(error));
      started.socket?.on('gap', (gap) => {
        if (gap.phase === 'start')
          log.warn(
            { gaps: gap.total },
            'the psample family was unregistered (module reload, OVS upgrade?): no sample can arrive until it is back',
          );
        else
          log.info(
            { gaps: gap.total, durationMs: gap.durationMs, netlinkFamily: gap.familyId, multicastGroup: gap.groupId },
            'the psample family is back: listening again',
          );
      });
      started.socket?.on('error', (error) => stop(error));
      return async () => {
        // Judged before the pipeline closes, which ends every part of it.
        const readinessAtExit = readiness.summary();
        try {
          server?.closeAllConnections();
          server?.close();
          try {
            // The native flows' and lines' chains and endpoints are made from the OVN session: the
            // packets they still hold are summed, and the last interval and lines written, before it closes.
            if (native !== undefined) {
              started.socket?.close();
              flows?.stop();
            }
            if (nativeEventLines !== undefined) {
              started.socket?.close();
              nativeEventLines.release(true);
            }
          } finally {
            await started.close();
          }
        } finally {
          // After the pipeline closed: the packets its grouping still held are in the last interval.
          try {
            flows?.stop();
          } finally {
            native?.close();
            nativeEventLines?.close();
          }
          lines?.flush();
          await closeOutputs();
          const summary = watchSummary(started.sourceStats(), counts, started.decoderStats(), readinessAtExit);
          log.info(summary.fields, summary.text);
        }
      };
    });
  });
}

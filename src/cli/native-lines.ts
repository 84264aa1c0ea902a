import type { Logger } from 'pino';
import type { FlowSubject } from '../events/network-event';
import type { OvnPsampleMetrics } from '../metrics/metrics';
import { NativeEventLines, type NativeEventLinesOptions } from '../output/native-event-lines';
import type { BufferedOutput } from '../output/sink';
import type { Pipeline } from './event-pipeline';
import type { WatchCounts } from './watch-summary';

/**
 * watch's JSON and human lines over the psample socket when nothing else needs each packet (no
 * pcapng): the socket's batches go to native lines (src/output/native-event-lines.ts), released
 * after each delivery and when packets waited out their window; --count's end stops watch.
 */
export function nativeEventLinesOf(
  pipeline: Pipeline,
  output: BufferedOutput,
  format: NativeEventLinesOptions['format'],
  groupWindowMs: number,
  bySourcePort: boolean,
  limit: number,
  counts: WatchCounts,
  accept: (subject: FlowSubject) => boolean,
  metrics: OvnPsampleMetrics | undefined,
  stop: () => void,
  log: Logger,
): NativeEventLines {
  let malformedRecords = 0;
  const afterRelease = (): void => {
    if (lines.malformedRecords > malformedRecords) {
      log.warn(
        { malformedRecords: lines.malformedRecords },
        `${lines.malformedRecords - malformedRecords} sample record(s) reached outside their batch and were skipped with the rest of it`,
      );
      malformedRecords = lines.malformedRecords;
    }
    if (counts.shown >= limit) stop();
  };
  const lines: NativeEventLines = new NativeEventLines({
    assembler: pipeline.assembler,
    ...(pipeline.ovn === undefined ? {} : { decoder: pipeline.ovn.decoder }),
    ...(pipeline.ovn?.pods === undefined ? {} : { pods: pipeline.ovn.pods }),
    groupWindowMs,
    format,
    bySourcePort,
    interfaceName: pipeline.interfaces.name,
    accept,
    ...(metrics === undefined ? {} : { metrics }),
    limit,
    counts,
    write: (bytes) => output.writeNow(bytes),
    due: () => {
      lines.release(false);
      afterRelease();
    },
  });
  pipeline.socket!.on('batch', (batch) => {
    try {
      lines.add(batch);
    } finally {
      // The lines copied what they keep, and nothing else reads the batch: its bytes need not wait for a garbage collection.
      batch.release();
    }
    afterRelease();
  });
  return lines;
}

import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterEach, beforeEach, vi } from 'vitest';
import { NetworkEventAssembler } from '../../../src/events/event-assembler';
import { compileFilter, type NetworkEventFilter } from '../../../src/events/filter';
import type { NetworkEvent } from '../../../src/events/network-event';
import { OvnPsampleMetrics } from '../../../src/metrics/metrics';
import { HumanFormatter } from '../../../src/output/event-human';
import { LineBuffer } from '../../../src/output/line-buffer';
import { NativeEventLines, type NativeEventLinesOptions } from '../../../src/output/native-event-lines';
import type { PsampleBatch } from '../../../src/psample/batch';
import { batchesOf, messagesOf, packetArb } from '../../events/support/random-packets';

// watch's lines both ways over the same deliveries: the per-packet path (NetworkEventAssembler,
// watch's counting, a formatter per event) and the native one (NativeEventLines per release). The
// clock is vitest's: both paths see the same time, and packets leave their window only when the
// test moves it.

/** Every control character but tab, which a name may hold as it is. */
export const CONTROLS_BUT_TAB = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i))
  .filter((c) => c !== '\t')
  .join('');

/** Interface names by ifindex modulo their count: none; a short one whose UTF-8, UTF-16 and code point lengths all differ; one past 40 columns with every control character but tab. */
export const HOSTILE_INTERFACE_NAMES: readonly (string | undefined)[] = [
  undefined,
  'e\u001b🚀ü→\t',
  `veth-${'x'.repeat(8)}${CONTROLS_BUT_TAB}\u007f-🚀`,
];

/** Fakes timers, performance and Date for each test of the file (node:perf_hooks' own performance too). */
export function useFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance', 'Date'] });
    // The fake clock replaces globalThis.performance; the code reads node:perf_hooks' own.
    const fake = globalThis.performance;
    vi.spyOn(performance, 'now').mockImplementation(() => fake.now());
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });
}

export interface Run {
  readonly lines: string;
  readonly counts: { packets: number; shown: number; filtered: number };
  readonly metrics: string;
}

export interface Delivery {
  readonly batch: PsampleBatch;
  /** The clock moved this far before it arrives. */
  readonly afterMs: number;
}

export interface LinesCase {
  readonly windowMs: number;
  readonly filter: NetworkEventFilter;
  readonly limit: number;
}

/** Random packets cut into deliveries, the window passing between some of them. */
export const deliveriesArb: fc.Arbitrary<Delivery[]> = fc
  .tuple(
    fc.array(packetArb, { minLength: 1, maxLength: 30 }),
    fc.array(fc.nat(200), { maxLength: 5 }),
    fc.array(fc.constantFrom(0, 10, 49, 50, 51, 120), { minLength: 6, maxLength: 6 }),
  )
  .map(([packets, cuts, gaps]) => batchesOf(messagesOf(packets), cuts).map((batch, i) => ({ batch, afterMs: gaps[i % gaps.length]! })));

/** The per-packet path: `write` is the formatter's, for each event watch's listener shows. */
export async function perPacketLines(
  deliveries: readonly Delivery[],
  c: LinesCase,
  write: (event: NetworkEvent, out: LineBuffer) => void,
): Promise<Run> {
  const assembler = new NetworkEventAssembler({ groupWindowMs: c.windowMs });
  const metrics = new OvnPsampleMetrics();
  const accept = compileFilter(c.filter);
  const out = new LineBuffer();
  const counts = { packets: 0, shown: 0, filtered: 0 };
  // watch's listener (src/cli/commands/watch.ts).
  assembler.on('event', (event) => {
    counts.packets++;
    metrics.observe(event);
    if (counts.shown >= c.limit) return;
    if (!accept(event)) {
      counts.filtered++;
      return;
    }
    counts.shown++;
    write(event, out);
  });
  for (const d of deliveries) {
    await vi.advanceTimersByTimeAsync(d.afterMs);
    assembler.pushBatch(d.batch);
  }
  assembler.close();
  return { lines: out.take().toString(), counts, metrics: await metrics.registry.metrics() };
}

/** The native path, in `format`, interfaces named by `interfaceName`. */
export async function nativeLines(
  deliveries: readonly Delivery[],
  c: LinesCase,
  format: NativeEventLinesOptions['format'],
  interfaceName: NativeEventLinesOptions['interfaceName'],
): Promise<Run> {
  const metrics = new OvnPsampleMetrics();
  const written: Buffer[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines: NativeEventLines = new NativeEventLines({
    assembler: new NetworkEventAssembler({ groupWindowMs: c.windowMs }),
    groupWindowMs: c.windowMs,
    format,
    bySourcePort: c.filter.port !== undefined,
    interfaceName,
    accept: compileFilter(c.filter),
    metrics,
    limit: c.limit,
    counts,
    // Copied: the buffer is written over once handed on.
    write: (bytes) => written.push(Buffer.from(bytes)) > 0,
    due: () => lines.release(false),
  });
  for (const d of deliveries) {
    await vi.advanceTimersByTimeAsync(d.afterMs);
    lines.add(d.batch);
  }
  lines.release(true);
  lines.close();
  return { lines: Buffer.concat(written).toString(), counts, metrics: await metrics.registry.metrics() };
}

/** Native lines without a grouping window, filter or limit (but what `options` says), counting into `counts`. */
export function linesWithoutWindow(
  write: NativeEventLinesOptions['write'],
  counts: NativeEventLinesOptions['counts'],
  options: Partial<NativeEventLinesOptions> & Pick<NativeEventLinesOptions, 'format' | 'interfaceName'>,
): NativeEventLines {
  return new NativeEventLines({
    assembler: new NetworkEventAssembler({ groupWindowMs: 0 }),
    groupWindowMs: 0,
    bySourcePort: false,
    accept: () => true,
    limit: Infinity,
    counts,
    write,
    due: () => undefined,
    ...options,
  });
}

/** The human lines of `batches`, one event per sample, written per event (HumanFormatter, as IPFIX and --pcapng do). */
export function humanLinesPerEvent(
  batches: readonly PsampleBatch[],
  color: boolean,
  interfaceName: (ifindex: number) => string | undefined,
): string {
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  const formatter = new HumanFormatter(color, interfaceName);
  const out = new LineBuffer();
  assembler.on('event', (event) => formatter.write(event, out));
  for (const batch of batches) assembler.pushBatch(batch);
  assembler.close();
  return out.take().toString();
}

/** The same lines written per release (NativeEventLines, as watch from psample does). */
export function humanLinesPerRelease(
  batches: readonly PsampleBatch[],
  color: boolean,
  interfaceName: (ifindex: number) => string | undefined,
): string {
  const written: Buffer[] = [];
  const lines = linesWithoutWindow(
    (bytes) => written.push(Buffer.from(bytes)) > 0,
    { packets: 0, shown: 0, filtered: 0 },
    { format: { kind: 'human', color }, interfaceName },
  );
  for (const batch of batches) lines.add(batch);
  lines.release(true);
  lines.close();
  return Buffer.concat(written).toString();
}

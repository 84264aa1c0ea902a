import fc from 'fast-check';
import { expect, it, vi } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import type { NetworkEventFilter } from '../../src/events/filter';
import { JsonFormatter } from '../../src/output/event-json';
import { NativeEventLines, type NativeEventLinesOptions } from '../../src/output/native-event-lines';
import { PsampleBatch } from '../../src/psample/batch';
import { tcpSyn } from '../cli/support/frames';
import { linesWithoutWindow, nativeLines, perPacketLines, useFakeClock, type Delivery, type Run } from './support/watch-lines-harness';
import { batchOf, batchesOf, messagesOf, packetArb, T0 } from '../events/support/random-packets';

// watch --format json's native lines against the per-packet path they replace
// (support/watch-lines-harness.ts): the same batches must write the same bytes and give the same
// counts and metrics.

useFakeClock();

const interfaceName = (ifindex: number): string | undefined => (ifindex === 0 ? undefined : `eth"${ifindex}`);

const perPacket = (deliveries: readonly Delivery[], windowMs: number, filter: NetworkEventFilter, limit: number): Promise<Run> => {
  const formatter = new JsonFormatter(interfaceName);
  return perPacketLines(deliveries, { windowMs, filter, limit }, (event, out) => formatter.write(event, out));
};

const native = (deliveries: readonly Delivery[], windowMs: number, filter: NetworkEventFilter, limit: number): Promise<Run> =>
  nativeLines(deliveries, { windowMs, filter, limit }, { kind: 'json' }, interfaceName);

const filters: NetworkEventFilter[] = [{}, { port: [80] }, { proto: ['udp'] }, { src: ['10.0.0.1'] }, { dst: ['10.0.1.0/31'] }];

it('writes the bytes, counts and metrics of the per-packet path (random packets, cookies, interfaces, batch cuts, the window passing between deliveries, filters, --count)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(packetArb, { minLength: 1, maxLength: 30 }),
      fc.array(fc.nat(200), { maxLength: 5 }),
      fc.array(fc.constantFrom(0, 10, 49, 50, 51, 120), { minLength: 6, maxLength: 6 }),
      fc.constantFrom(0, 50),
      fc.constantFrom(...filters),
      fc.constantFrom(Infinity, 1, 3, 10),
      async (packets, cuts, gaps, windowMs, filter, limit) => {
        const batches = batchesOf(messagesOf(packets), cuts);
        const deliveries = batches.map((batch, i) => ({ batch, afterMs: gaps[i % gaps.length]! }));
        const expected = await perPacket(deliveries, windowMs, filter, limit);
        const actual = await native(deliveries, windowMs, filter, limit);
        if (Object.keys(filter).length === 0) expect(expected.lines).not.toBe('');
        expect(actual.lines).toBe(expected.lines);
        expect(actual.counts).toEqual(expected.counts);
        expect(actual.metrics).toBe(expected.metrics);
      },
    ),
    { numRuns: 150 },
  );
});

/** Native JSON lines without a grouping window, filter or limit (but what `options` says). */
const jsonLinesWithoutWindow = (
  write: NativeEventLinesOptions['write'],
  counts: NativeEventLinesOptions['counts'],
  options: Partial<NativeEventLinesOptions> = {},
): NativeEventLines => linesWithoutWindow(write, counts, { format: { kind: 'json' }, interfaceName, ...options });

/** Native JSON lines with a 50 ms window whose timer calls `due` first, then releases; each line written is pushed to `written`. */
const windowedJsonLines = (written: string[], due: () => void = () => {}): NativeEventLines => {
  const lines: NativeEventLines = new NativeEventLines({
    assembler: new NetworkEventAssembler({ groupWindowMs: 50 }),
    groupWindowMs: 50,
    format: { kind: 'json' },
    bySourcePort: false,
    interfaceName,
    accept: () => true,
    limit: Infinity,
    counts: { packets: 0, shown: 0, filtered: 0 },
    write: (bytes) => written.push(...bytes.toString().trimEnd().split('\n')) > 0,
    due: () => {
      due();
      lines.release(false);
    },
  });
  return lines;
};

const synFrom = (srcPort: number): PsampleBatch =>
  batchOf([{ group: 7, proto: 0x800, data: tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort, dstPort: 80 }), timestampNs: T0 }]);

it('writes a packet that waited out its window with no batch after it when the window passes', async () => {
  const written: string[] = [];
  const lines = windowedJsonLines(written);
  lines.add(synFrom(1));
  expect(written).toEqual([]);
  await vi.advanceTimersByTimeAsync(50);
  expect(written).toHaveLength(1);
  expect(JSON.parse(written[0]!)).toMatchObject({ version: 1, samples: 1, verdict: 'unknown' });
  lines.close();
});

it('while batches keep coming, each releases what waited out its window and the timer does not wake for a release of its own; when they stop, it does', async () => {
  const written: string[] = [];
  let dueCalls = 0;
  const lines = windowedJsonLines(written, () => dueCalls++);
  // Every 40 ms, as watch's reader thread hands them over.
  lines.add(synFrom(1));
  await vi.advanceTimersByTimeAsync(40);
  lines.add(synFrom(2));
  await vi.advanceTimersByTimeAsync(40);
  lines.add(synFrom(3));
  expect(written).toHaveLength(1);
  await vi.advanceTimersByTimeAsync(49);
  expect(dueCalls).toBe(0);
  await vi.advanceTimersByTimeAsync(100);
  expect(dueCalls).toBeGreaterThan(0);
  expect(written.map((line) => Number(/"srcPort":(\d+)/.exec(line)![1]))).toEqual([1, 2, 3]);
  lines.close();
});

it('a writer that throws loses no count, and the lines after it are written', () => {
  let calls = 0;
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines = jsonLinesWithoutWindow(() => {
    calls++;
    if (calls === 1) throw new Error('the reader of the output went away');
    return true;
  }, counts);
  const batch = (): PsampleBatch =>
    batchOf([{ group: 7, proto: 0x800, data: tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1, dstPort: 80 }), timestampNs: T0 }]);
  expect(() => lines.add(batch())).toThrow('the reader of the output went away');
  lines.add(batch());
  expect(calls).toBe(2);
  expect(counts).toEqual({ packets: 2, shown: 2, filtered: 0 });
  lines.close();
});

it('lines past the buffer in one release are written whole, the buffer grown between them (the per-packet bytes)', async () => {
  const messages = Array.from({ length: 600 }, (_, i) => ({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: `10.0.${i >> 8}.${i & 0xff}`, srcPort: 1000 + i, dstPort: 80 }),
    timestampNs: T0 + BigInt(i),
    userCookie: Uint8Array.from([0x02, 0, 0, 1, 0, 0, 0, i & 0xff]),
  }));
  const deliveries = [{ batch: batchOf(messages), afterMs: 0 }];
  const expected = await perPacket(deliveries, 0, {}, Infinity);
  const actual = await native(deliveries, 0, {}, Infinity);
  // More than the LineBuffer's first 256 KiB.
  expect(expected.lines.length).toBeGreaterThan(256 * 1024);
  expect(actual.lines).toBe(expected.lines);
  expect(actual.counts).toEqual({ packets: 600, shown: 600, filtered: 0 });
});

it('a record that reaches outside its batch is counted with those after it; the lines before it are written', () => {
  const messages = [1, 2, 3].map((i) => ({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: `10.0.0.${i + 1}`, srcPort: 1, dstPort: 80 }),
    timestampNs: T0,
  }));
  const whole = batchOf(messages);
  // The batch cut in its last record.
  const cut = new PsampleBatch(whole.buffer.slice(0, whole.buffer.byteLength - 16), whole.length, whole.littleEndian);
  const written: string[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines = jsonLinesWithoutWindow((bytes) => written.push(bytes.toString()) > 0, counts);
  lines.add(cut);
  expect(lines.malformedRecords).toBe(1);
  expect(counts).toEqual({ packets: 2, shown: 2, filtered: 0 });
  expect(written.join('').trimEnd().split('\n')).toHaveLength(2);
  lines.close();
});

it('a writer that throws mid-release (the reader of the output went away) loses no count; the parts after it are written whole', () => {
  const written: string[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines = jsonLinesWithoutWindow((bytes) => {
    if (written.push(bytes.toString()) === 1) throw new Error('the reader of the output went away');
    return true;
  }, counts);
  const messages = Array.from({ length: 600 }, (_, i) => ({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: `10.0.${i >> 8}.${i & 0xff}`, srcPort: 1000 + i, dstPort: 80 }),
    timestampNs: T0 + BigInt(i),
  }));
  expect(() => lines.add(batchOf(messages))).toThrow('the reader of the output went away');
  expect(counts).toEqual({ packets: 600, shown: 600, filtered: 0 });
  // Handed on in parts: the first, given to the throwing call, and the rest, each of whole lines.
  expect(written.length).toBeGreaterThan(2);
  const parsed = written
    .join('')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { timestampNs: string });
  expect(parsed).toHaveLength(600);
  expect(parsed.at(-1)!.timestampNs).toBe(String(T0 + 599n));
  lines.close();
});

it('a filter that throws on a route: its packets are counted as filtered, the other routes written, the error thrown once the release is counted', () => {
  const written: string[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines = jsonLinesWithoutWindow((bytes) => written.push(bytes.toString()) > 0, counts, {
    accept: (subject) => {
      if (subject.fields.dst === '10.0.0.3') throw new Error('a filter failed');
      return true;
    },
  });
  const messages = [2, 3, 4, 3].map((host) => ({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: `10.0.0.${host}`, srcPort: 1, dstPort: 80 }),
    timestampNs: T0,
  }));
  expect(() => lines.add(batchOf(messages))).toThrow('a filter failed');
  expect(counts).toEqual({ packets: 4, shown: 2, filtered: 2 });
  expect(written.join('').trimEnd().split('\n')).toHaveLength(2);
  lines.close();
});

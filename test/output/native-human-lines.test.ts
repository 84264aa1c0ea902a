import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import type { NetworkEventFilter } from '../../src/events/filter';
import { HumanFormatter } from '../../src/output/event-human';
import { NativeEventLines } from '../../src/output/native-event-lines';
import type { PsampleBatch } from '../../src/psample/batch';
import { tcpSyn } from '../cli/support/frames';
import {
  deliveriesArb,
  HOSTILE_INTERFACE_NAMES,
  humanLinesPerEvent,
  humanLinesPerRelease,
  linesWithoutWindow,
  nativeLines,
  perPacketLines,
  useFakeClock,
  type Delivery,
  type LinesCase,
  type Run,
} from './support/watch-lines-harness';
import { batchOf, T0 } from '../events/support/random-packets';

// watch's human lines written natively per release (NativeEventLines, format human) against the
// per-packet path (NetworkEventAssembler + watch's counting + HumanFormatter): the same batches
// must write the same bytes and give the same counts and metrics, in colour or not, whatever the
// interface names hold (control characters, non-ASCII, astral characters, more than 40 columns),
// the columns widening across releases, in any time zone. The clock is vitest's.

const savedTz = process.env.TZ;
useFakeClock();
afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const interfaceName = (ifindex: number): string | undefined => HOSTILE_INTERFACE_NAMES[ifindex % HOSTILE_INTERFACE_NAMES.length];

interface Case extends LinesCase {
  readonly color: boolean;
}

const perPacket = (deliveries: readonly Delivery[], c: Case): Promise<Run> => {
  const formatter = new HumanFormatter(c.color, interfaceName);
  return perPacketLines(deliveries, c, (event, out) => formatter.write(event, out));
};

const native = (deliveries: readonly Delivery[], c: Case): Promise<Run> =>
  nativeLines(deliveries, c, { kind: 'human', color: c.color }, interfaceName);

const filters: NetworkEventFilter[] = [{}, { port: [80] }, { proto: ['udp'] }, { src: ['10.0.0.1'] }];

const caseArb = fc.record({
  windowMs: fc.constantFrom(0, 50),
  filter: fc.constantFrom(...filters),
  limit: fc.constantFrom(Infinity, 1, 3, 10),
  color: fc.boolean(),
});

for (const tz of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
  it(`writes the bytes, counts and metrics of the per-packet path (TZ=${tz}; colour or not, hostile and long interface names, batch cuts, the window, filters, --count)`, async () => {
    process.env.TZ = tz;
    await fc.assert(
      fc.asyncProperty(deliveriesArb, caseArb, async (deliveries, c) => {
        const expected = await perPacket(deliveries, c);
        const actual = await native(deliveries, c);
        if (Object.keys(c.filter).length === 0) expect(expected.lines).not.toBe('');
        expect(actual.lines).toBe(expected.lines);
        expect(actual.counts).toEqual(expected.counts);
        expect(actual.metrics).toBe(expected.metrics);
      }),
      { numRuns: tz === 'UTC' ? 100 : 30 },
    );
  });
}

it('a writer that throws mid-release (the reader of the output went away) loses no count; the parts after it are written whole, the columns as wide as before (the per-event bytes)', () => {
  const written: string[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines = linesWithoutWindow(
    (bytes) => {
      if (written.push(bytes.toString()) === 1) throw new Error('write EPIPE');
      return true;
    },
    counts,
    { format: { kind: 'human', color: false }, interfaceName },
  );
  const messages = Array.from({ length: 1500 }, (_, i) => ({
    group: 7,
    iifindex: i % 3,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: `10.0.${i >> 8}.${i & 0xff}`, srcPort: 1000 + i, dstPort: 80 }),
    timestampNs: T0 + BigInt(i),
  }));
  expect(() => lines.add(batchOf(messages))).toThrow('write EPIPE');
  expect(counts).toEqual({ packets: 1500, shown: 1500, filtered: 0 });
  expect(written.length).toBeGreaterThan(2);
  // Every line whole and as the per-event writer writes it: the widths went on across the parts.
  expect(written.join('')).toBe(humanLinesPerEvent([batchOf(messages)], false, interfaceName));
  lines.close();
});

it('a writer that closes the lines mid-release (the output went away): the release stops there, nothing throws, what was written was counted, later deliveries are ignored', () => {
  const written: string[] = [];
  const counts = { packets: 0, shown: 0, filtered: 0 };
  const lines: NativeEventLines = linesWithoutWindow(
    (bytes) => {
      written.push(bytes.toString());
      lines.close();
      return true;
    },
    counts,
    { format: { kind: 'human', color: true }, interfaceName },
  );
  const batch = (): PsampleBatch =>
    batchOf(
      Array.from({ length: 1500 }, (_, i) => ({
        group: 7,
        proto: 0x800,
        data: tcpSyn({ src: '10.0.0.1', dst: `10.0.${i >> 8}.${i & 0xff}`, srcPort: 1000 + i, dstPort: 80 }),
        timestampNs: T0 + BigInt(i),
      })),
    );
  lines.add(batch());
  expect(lines.closed).toBe(true);
  expect(written).toHaveLength(1);
  const shown = written[0]!.split('\n').length - 1;
  expect(shown).toBeGreaterThan(0);
  expect(shown).toBeLessThan(1500);
  // Every released packet was judged before the hand-on that closed them; the lines written are whole.
  expect(counts.shown).toBeGreaterThanOrEqual(shown);
  expect(written[0]!.endsWith('\n')).toBe(true);
  lines.add(batch());
  expect(written).toHaveLength(1);
});

it('more distinct texts than either writer keeps (per-event texts, per-release routes) start over without a changed byte', () => {
  const count = 66_000;
  const batches: PsampleBatch[] = [];
  for (let from = 0; from < count; from += 1000) {
    batches.push(
      batchOf(
        Array.from({ length: 1000 }, (_, k) => {
          const i = from + k;
          return {
            group: 7,
            iifindex: i % 3,
            proto: 0x800,
            data: tcpSyn({ src: '10.0.0.1', dst: `10.${i >> 16}.${(i >> 8) & 0xff}.${i & 0xff}`, srcPort: 1000, dstPort: 80 }),
            timestampNs: T0 + BigInt(i) * 1_000_000n,
          };
        }),
      ),
    );
  }
  const perEvent = humanLinesPerEvent(batches, false, interfaceName);
  const perRelease = humanLinesPerRelease(batches, false, interfaceName);
  expect(perEvent.split('\n')).toHaveLength(count + 1);
  expect(perRelease).toBe(perEvent);
});

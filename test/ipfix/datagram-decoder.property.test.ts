// Hostile input: whatever bytes arrive, the decoder never throws and accounts for every datagram
// and every data set; well-formed messages decode to exactly what was encoded.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { IpfixDatagramDecoder } from '../../src/ipfix/datagram-decoder';
import { emptyIpfixStats, type IpfixStats } from '../../src/ipfix/stats';
import type { IpfixSample } from '../../src/ipfix/types';
import { dataSet, FLOW_FIELDS, flowRecord, message, ovsFixture, templateSet } from './support/ipfix-writer';

const OPTIONS = { templateLifetimeMs: 60_000, templateWaitMs: 5_000, pendingLimit: 16, templateFallback: true };
const FIXTURE = ovsFixture();

/** The identities that hold after any input (before close). */
function expectAccounted(stats: IpfixStats, samples: number): void {
  expect(stats.datagrams).toBe(stats.malformed + stats.messages);
  expect(stats.records).toBe(samples);
  expect(stats.templateMissing).toBe(stats.templateLate + stats.templateLost + stats.pending);
  expect(stats.pending).toBeLessThanOrEqual(OPTIONS.pendingLimit);
}

function feedAll(datagrams: readonly Uint8Array[]): { stats: IpfixStats; samples: IpfixSample[] } {
  const decoder = new IpfixDatagramDecoder(OPTIONS, emptyIpfixStats());
  const samples: IpfixSample[] = [];
  datagrams.forEach((bytes, i) => {
    decoder.decode(Buffer.from(bytes), { address: '127.0.0.1', port: 1 + (i % 3) }, i, (s) => samples.push(s));
  });
  return { stats: decoder.stats, samples };
}

/** A datagram of the real capture, mutated: bits flipped, bytes overwritten, cut or extended. */
const mutated = fc
  .record({
    index: fc.nat({ max: FIXTURE.length - 1 }),
    edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
    cut: fc.option(fc.nat()),
    tail: fc.uint8Array({ maxLength: 16 }),
  })
  .map(({ index, edits, cut, tail }) => {
    const bytes = Buffer.from(FIXTURE[index]!.bytes);
    for (const [at, value] of edits) bytes[at % bytes.length] = value;
    const kept = cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
    return Buffer.concat([kept, tail]);
  });

describe('IPFIX decoder properties', () => {
  test('random bytes: never throws, every datagram is malformed or a message', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 600 }), { maxLength: 20 }), (datagrams) => {
        const { stats, samples } = feedAll(datagrams);
        expectAccounted(stats, samples.length);
      }),
      { numRuns: 500 },
    );
  });

  test('mutations of real OVS messages, between real ones: never throws, every data set is accounted for', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(mutated, fc.constantFrom(...FIXTURE.map((d) => d.bytes))), { maxLength: 40 }), (datagrams) => {
        const { stats, samples } = feedAll(datagrams);
        expectAccounted(stats, samples.length);
        for (const sample of samples) {
          expect(Number.isInteger(sample.observationDomainId)).toBe(true);
          expect(sample.weight).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('well-formed messages decode to what was encoded, whichever comes first, template or records', () => {
    const flow = fc.record({
      point: fc.nat({ max: 2 ** 32 - 1 }),
      src: fc.ipV4(),
      dst: fc.ipV4(),
      protocol: fc.integer({ min: 0, max: 255 }),
      srcPort: fc.integer({ min: 0, max: 65535 }),
      dstPort: fc.integer({ min: 0, max: 65535 }),
      packets: fc.nat({ max: 2 ** 40 }),
    });
    fc.assert(
      fc.property(fc.array(fc.array(flow, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 10 }), fc.nat(), (messages, at) => {
        const templateAt = at % (messages.length + 1);
        const datagrams: Buffer[] = [];
        let sequence = 0;
        messages.forEach((flows, i) => {
          if (i === templateAt) datagrams.push(message({ sequence, domain: 5 }, [templateSet([{ id: 260, fields: FLOW_FIELDS }])]));
          datagrams.push(
            message({ sequence, domain: 5 }, [
              dataSet(
                260,
                flows.map((f) => flowRecord(f.point, f.src, f.dst, f.protocol, f.srcPort, f.dstPort, f.packets)),
              ),
            ]),
          );
          sequence += flows.length;
        });
        if (templateAt === messages.length)
          datagrams.push(message({ sequence, domain: 5 }, [templateSet([{ id: 260, fields: FLOW_FIELDS }])]));
        const decoder = new IpfixDatagramDecoder(OPTIONS, emptyIpfixStats());
        const samples: IpfixSample[] = [];
        for (const bytes of datagrams) decoder.decode(bytes, { address: '127.0.0.1', port: 9 }, 0, (s) => samples.push(s));
        const expected = messages.flat().map((f) => ({
          point: f.point,
          weight: f.packets,
          packet: { src: f.src, dst: f.dst, protocol: f.protocol, srcPort: f.srcPort, dstPort: f.dstPort },
        }));
        expect(samples.map((s) => ({ point: s.observationPointId, weight: s.weight, packet: s.packet }))).toEqual(expected);
        expect(decoder.stats).toMatchObject({ templateLate: Math.min(templateAt, messages.length), sequenceLost: 0, malformed: 0 });
      }),
      { numRuns: 300 },
    );
  });
});

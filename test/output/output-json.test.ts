import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodePacket, decodePsample, encodePsample, type PsampleMessage } from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { splitObservationDomain, observationIdsFromCookie } from '../../src/ovn/cookie';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { toHex } from '../../src/output/hex';
import { sampleJson } from '../../src/output/sample-json';
import { SampleLines, type SampleEventSource } from '../../src/output/sample-lines';
import { PsampleBatch } from '../../src/psample/batch';
import type { PsampleSample } from '../../src/psample/sample';
import { statValues } from '../../src/psample/stats';
import type { PsampleTunnel } from '../../src/psample/types';
import { everyAttributeSample, vectors } from '../support/fixtures';
import { capturedFrames, craftedFrames } from '../packet/packet-frames';
import { baseEvent } from './sample-json-golden';

// The serializers write JSON lines field by field (the sample line natively). What they must
// write is what JSON.stringify wrote of the objects the CLI built before, byte for byte: that old
// code is kept here as the reference.
function referenceTunnel(t: PsampleTunnel): Record<string, unknown> {
  return {
    ...t,
    id: t.id?.toString(),
    geneveOptions: t.geneveOptions && toHex(t.geneveOptions),
    erspanOptions: t.erspanOptions && toHex(t.erspanOptions),
  };
}

function referenceSample(message: PsampleMessage): Record<string, unknown> {
  const ids = message.userCookie && observationIdsFromCookie(message.userCookie);
  return {
    command: message.command,
    group: message.group,
    groupSeq: message.groupSeq,
    iifindex: message.iifindex,
    oifindex: message.oifindex,
    origSize: message.origSize,
    rate: message.rate,
    probability: message.probability,
    timestampNs: message.timestampNs.toString(),
    latencyNs: message.latencyNs?.toString(),
    outTc: message.outTc,
    outTcOcc: message.outTcOcc?.toString(),
    proto: message.proto,
    data: toHex(message.data),
    userCookie: message.userCookie && toHex(message.userCookie),
    groupRefcount: message.groupRefcount,
    tunnel: message.tunnel && referenceTunnel(message.tunnel),
    nsid: message.nsid,
    obsDomainId: ids?.obsDomainId,
    obsPointId: ids?.obsPointId,
    ovn: ids && splitObservationDomain(ids.obsDomainId),
    packet: message.command === 'sample' ? decodePacket(message.data, message.proto) : undefined,
  };
}

function reference(message: PsampleMessage, event?: OvnSampleEvent): string {
  return JSON.stringify(event === undefined ? referenceSample(message) : { ...referenceSample(message), event });
}

/** The batch the socket delivers for these messages. */
function batchOf(messages: readonly Partial<PsampleMessage>[]): PsampleBatch {
  const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => encodePsample(m))), 0, statValues());
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
}

/** The samples the socket delivers (lazy, read from a batch) for these messages. */
function delivered(messages: readonly PsampleMessage[]): PsampleSample[] {
  return [...batchOf(messages)];
}

const event: OvnSampleEvent = Object.freeze({
  ...baseEvent,
  message: 'Allowed by network policy "web" in namespace shop — ünïcode, a tab\there and a \\ backslash',
}) as OvnSampleEvent;

const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const arbitraryMessage: fc.Arbitrary<PsampleMessage> = fc.record(
  {
    command: fc.constantFrom('sample', 'new-group', 'del-group'),
    group: u32,
    groupSeq: u32,
    iifindex: u16,
    oifindex: u16,
    origSize: u32,
    rate: u32,
    probability: fc.boolean(),
    timestampNs: u64,
    latencyNs: u64,
    outTc: u16,
    outTcOcc: u64,
    proto: fc.constantFrom(0x0800, 0x86dd, 0x0806, 0x8100, 0x1234),
    data: fc.oneof(fc.uint8Array({ maxLength: 120 }), fc.constantFrom(...craftedFrames.map((f) => f.bytes))),
    userCookie: fc.uint8Array({ maxLength: 16 }),
    groupRefcount: u32,
    tunnel: fc.constant(everyAttributeSample.tunnel),
  },
  { requiredKeys: ['command', 'group', 'groupSeq', 'iifindex', 'origSize', 'rate', 'probability', 'timestampNs', 'proto', 'data'] },
);

describe('sampleJson', () => {
  const messages = [
    ...vectors().flatMap((v) => decodePsample(v.bytes)),
    everyAttributeSample,
    { ...everyAttributeSample, userCookie: Uint8Array.of(0x2b, 0, 0, 3, 0, 0, 3, 0xf4), tunnel: undefined },
    {
      command: 'new-group',
      group: 10,
      groupSeq: 0,
      iifindex: 0,
      origSize: 0,
      rate: 0,
      probability: false,
      timestampNs: 0n,
      proto: 0,
      data: new Uint8Array(0),
      groupRefcount: 1,
    },
  ] as PsampleMessage[];

  it('writes what JSON.stringify wrote of the sample object, for captures, every attribute and group events', () => {
    for (const message of delivered(messages)) {
      expect(sampleJson(message)).toBe(reference(message));
      expect(sampleJson(message, event)).toBe(reference(message, event));
      JSON.parse(sampleJson(message, event));
    }
  });

  it('writes the same for any message, any cookie length and any packet bytes', () => {
    fc.assert(
      fc.property(fc.array(arbitraryMessage, { minLength: 1, maxLength: 4 }), (batch) => {
        for (const message of delivered(batch)) {
          expect(sampleJson(message)).toBe(reference(message));
          expect(sampleJson(message, event)).toBe(reference(message, event));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('sampleJson of samples that repeat a packet (one packet sampled at several stages)', () => {
  const frame = craftedFrames.find((f) => f.bytes.byteLength > 40)!.bytes;
  const base = { ...everyAttributeSample, tunnel: undefined, proto: 0x0800, data: frame } as PsampleMessage;
  const flipped = (at: number): Uint8Array => {
    const bytes = frame.slice();
    bytes[at]! ^= 0xff;
    return bytes;
  };
  const variants: PsampleMessage[] = [
    base,
    { ...base, proto: 0x86dd },
    { ...base, data: flipped(0) },
    { ...base, data: flipped(frame.byteLength - 1) },
    { ...base, data: frame.subarray(0, frame.byteLength - 1) },
    { ...base, data: new Uint8Array([...frame, 0]) },
    { ...base, command: 'new-group' },
  ];

  it('writes each as JSON.stringify did, in any order, the same bytes repeated or nearly (other proto, one byte changed, shorter, longer)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...variants), { minLength: 1, maxLength: 12 }), (sequence) => {
        for (const message of delivered(sequence)) expect(sampleJson(message, event)).toBe(reference(message, event));
      }),
      { numRuns: 300 },
    );
  });

  it('does not answer from the bytes it saw when the buffer they were in now holds others', () => {
    const [message] = delivered([base]);
    expect(sampleJson(message!)).toBe(reference(message!));
    message!.data.set(flipped(frame.byteLength - 1));
    expect(sampleJson(message!)).toBe(reference(message!));
  });
});

// `listen --format json` writes its batches as bytes; they must be the lines sampleJson()
// writes, UTF-8 encoded, whatever the events say (non-ASCII, escapes) and whatever repeats.
describe('SampleLines (JSON)', () => {
  const arbitraryEvent: fc.Arbitrary<OvnSampleEvent> = fc.oneof(
    fc.constant(event),
    fc
      .record({ message: fc.string({ unit: 'binary' }), action: fc.string({ unit: 'grapheme' }) })
      .map(
        ({ message, action }) =>
          Object.freeze({ ...event, message, action, datapath: Object.freeze({ key: 7, switch: action }) }) as OvnSampleEvent,
      ),
  );
  // As OvnSampleDecoder.decodeSample() answers: per OVS cookie, else per cookie length.
  const cookieKey = (sample: PsampleSample): string => {
    const cookie = sample.userCookie ?? new Uint8Array(0);
    return cookie.byteLength === 8 ? Buffer.from(cookie).toString('hex') : `${cookie.byteLength} bytes`;
  };
  /** A decoder that answers one event per cookie, and keeps it (or not). */
  function source(eventOf: (sample: PsampleSample) => OvnSampleEvent, holds = true): SampleEventSource & { calls: number; change(): void } {
    const listeners = new Set<() => void>();
    return {
      calls: 0,
      decodeSample(sample) {
        this.calls++;
        return eventOf(sample as PsampleSample);
      },
      holds: () => holds,
      on: (_: 'change', listener: () => void) => listeners.add(listener),
      off: (_: 'change', listener: () => void) => listeners.delete(listener),
      change: () => listeners.forEach((listener) => listener()),
    };
  }
  const lines = (samples: readonly PsampleSample[], eventOf?: (sample: PsampleSample) => OvnSampleEvent): string =>
    samples
      .filter((sample) => sample.command === 'sample')
      .map((sample) => `${reference(sample, eventOf?.(sample))}\n`)
      .join('');

  it('writes the UTF-8 bytes of the lines JSON.stringify wrote, for any batch, any events and repeated packets, group events left out', () => {
    const withEvents = new Map<string, OvnSampleEvent>();
    const eventOf = (sample: PsampleSample): OvnSampleEvent => withEvents.get(cookieKey(sample))!;
    const plain = new SampleLines('json');
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.oneof(arbitraryMessage, fc.constantFrom(everyAttributeSample, ...vectors().flatMap((v) => decodePsample(v.bytes)))),
            arbitraryEvent,
            fc.nat(2),
          ),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (drawn) => {
          // Each message repeated 1-3 times in a row, as OVN samples one packet at several stages.
          const batch = batchOf(drawn.flatMap(([message, , times]) => Array<PsampleMessage>(times + 1).fill(message)));
          const samples = [...batch];
          withEvents.clear();
          let m = 0;
          for (const [, e, times] of drawn) {
            for (let i = 0; i <= times; i++, m++) if (!withEvents.has(cookieKey(samples[m]!))) withEvents.set(cookieKey(samples[m]!), e);
          }
          expect(plain.write(batch).bytes.toString('latin1')).toBe(Buffer.from(lines(samples)).toString('latin1'));
          // A new table for each batch: these events are made up per batch, not per cookie.
          const written = new SampleLines('json', source(eventOf)).write(batch);
          expect(written.bytes.toString('latin1')).toBe(Buffer.from(lines(samples, eventOf)).toString('latin1'));
          expect(written.lines).toBe(samples.filter((sample) => sample.command === 'sample').length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes nothing for a batch of group events', () => {
    expect(new SampleLines('json').write(batchOf([{ command: 'new-group', group: 1 }])).bytes.length).toBe(0);
  });

  it('stops after maxLines lines, counting samples only', () => {
    const batch = batchOf([{ group: 1 }, { command: 'new-group', group: 1 }, { group: 2 }, { group: 3 }]);
    const { bytes, lines: written } = new SampleLines('json').write(batch, 2);
    expect(written).toBe(2);
    expect(
      bytes
        .toString()
        .split('\n')
        .map((line) => (line === '' ? undefined : (JSON.parse(line) as { group: number }).group)),
    ).toEqual([1, 2, undefined]);
  });

  it('decodes each cookie once while the decoder keeps its answer, again after a change, and per batch when it does not keep it', () => {
    const cookie = Uint8Array.of(0x2b, 0, 0, 3, 0, 0, 3, 0xf4);
    const batch = batchOf([
      { group: 1, userCookie: cookie },
      { group: 2, userCookie: cookie },
      { group: 3 },
      { group: 4, userCookie: Uint8Array.of(1) },
    ]);
    const kept = source(() => event);
    const keeping = new SampleLines('json', kept);
    keeping.write(batch);
    expect(kept.calls).toBe(3);
    keeping.write(batch);
    expect(kept.calls).toBe(3);
    kept.change();
    expect(keeping.write(batch).bytes.toString()).toBe(lines([...batch], () => event));
    expect(kept.calls).toBe(6);
    keeping.close();
    kept.change();
    keeping.write(batch);
    expect(kept.calls).toBe(6);

    const passing = source(() => event, false);
    const answering = new SampleLines('json', passing);
    answering.write(batch);
    answering.write(batch);
    expect(passing.calls).toBe(6);
  });

  it('never writes over the bytes it handed out, when it fills its room and starts another', () => {
    const big = Object.freeze({ ...event, message: 'ü'.repeat(40_000) }) as OvnSampleEvent;
    const taken: { bytes: Buffer; copy: Buffer }[] = [];
    for (let round = 0; round < 40; round++) {
      const batch = batchOf(Array<PsampleMessage>((round % 5) + 1).fill(everyAttributeSample));
      const writer = new SampleLines(
        'json',
        source(() => (round % 2 === 0 ? big : event)),
      );
      const bytes = writer.write(batch).bytes;
      taken.push({ bytes, copy: Buffer.from(bytes) });
    }
    for (const { bytes, copy } of taken) expect(bytes.equals(copy)).toBe(true);
    expect(taken[0]!.copy.toString()).toBe(`${reference(delivered([everyAttributeSample])[0]!, big)}\n`);
  });
});

// The native decoder's JSON is what decodePacket() parses and what the JSON outputs copy: it must
// be JSON.stringify's own form (no space, canonical numbers and escapes, decodePacket()'s key
// order), or the two would disagree.
describe('the native packet JSON', () => {
  const frames = [...craftedFrames, ...capturedFrames()];

  it('writes JSON.stringify(decodePacket()) for every test frame cut at every length, as every proto', () => {
    for (const frame of frames) {
      for (const proto of [frame.proto, 0x0800, 0x86dd, 0x0806]) {
        for (let length = 0; length <= frame.bytes.length; length++) {
          const data = frame.bytes.subarray(0, length);
          expect(addon.packetJson(data, proto)).toBe(JSON.stringify(decodePacket(data, proto)));
        }
      }
    }
  });

  it('writes JSON.stringify(decodePacket()) for any bytes: malformed headers, unknown protocols', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.constantFrom(0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x1234), (bytes, proto) => {
        expect(addon.packetJson(bytes, proto)).toBe(JSON.stringify(decodePacket(bytes, proto)));
      }),
      { numRuns: 2000 },
    );
  });
});

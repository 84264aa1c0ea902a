import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodePacket, encodePsample, type NetworkEvent, type PsampleMessage, type VerdictStep } from '../../src/index';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import { chainText } from '../../src/events/network-event';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { formatCookieHex } from '../../src/ovn/cookie';
import type { Endpoint } from '../../src/ovn/endpoint';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { EVENT_JSON_VERSION, JsonFormatter } from '../../src/output/event-json';
import { packetFields } from '../../src/packet/fields';
import { toHex } from '../../src/output/hex';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { craftedFrames } from '../packet/packet-frames';

// `watch --format json` writes its lines field by field; what it must write is what the old
// formatter wrote, with JSON.stringify for every nested value: that code is kept here as the reference.
function referenceIsoTime(timestampNs: bigint): string {
  const iso = new Date(Number(timestampNs / 1_000_000n)).toISOString();
  return `${iso.slice(0, 19)}.${String(timestampNs % 1_000_000_000n).padStart(9, '0')}Z`;
}
const referenceMember = (name: string, value: string | undefined): string => (value === undefined ? '' : `,"${name}":${value}`);
const referenceNumber = (value: number | undefined): string | undefined => (value === undefined ? undefined : String(value));
function referenceStep(step: VerdictStep): string {
  const ids = step.cookie;
  return (
    `{"verdict":"${step.verdict}","text":${JSON.stringify(step.text)},"policy":${JSON.stringify(step.policy)},"samples":${step.samples}` +
    referenceMember('cookie', ids === undefined ? undefined : `"${formatCookieHex(ids)}"`) +
    referenceMember('obsDomainId', referenceNumber(ids?.obsDomainId)) +
    referenceMember('obsPointId', referenceNumber(ids?.obsPointId)) +
    referenceMember('event', step.event === undefined ? undefined : JSON.stringify(step.event)) +
    '}'
  );
}
function reference(event: NetworkEvent, iface: string | undefined): string {
  const first: PsampleMessage = event.samples[0]!;
  let steps = '';
  for (const s of event.chain) steps += steps === '' ? referenceStep(s) : `,${referenceStep(s)}`;
  return (
    `{"version":${EVENT_JSON_VERSION},"time":"${referenceIsoTime(event.timestampNs)}","timestampNs":"${event.timestampNs}"` +
    `,"verdict":"${event.verdict}","message":${JSON.stringify(chainText(event))}` +
    referenceMember('src', event.src === undefined ? undefined : JSON.stringify(event.src)) +
    referenceMember('dst', event.dst === undefined ? undefined : JSON.stringify(event.dst)) +
    `,"chain":[${steps}]` +
    `,"group":${event.group},"iifindex":${event.iifindex}` +
    referenceMember('interface', iface === undefined ? undefined : JSON.stringify(iface)) +
    referenceMember('oifindex', referenceNumber(event.oifindex)) +
    referenceMember('nsid', referenceNumber(event.nsid)) +
    `,"origSize":${first.origSize},"rate":${first.rate},"probability":${first.probability}` +
    referenceMember('cookie', first.userCookie === undefined ? undefined : `"${toHex(first.userCookie)}"`) +
    referenceMember('datapath', event.datapath === undefined ? undefined : JSON.stringify(event.datapath)) +
    `,"samples":${event.samples.length},"packet":${JSON.stringify(event.packet)},"data":"${toHex(first.data)}"}\n`
  );
}

function delivered(message: PsampleMessage): PsampleMessage {
  const [buffer, count] = addon.decode(encodePsample(message), 0, statValues());
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN).at(0)!;
}

const decodedEvent: OvnSampleEvent = Object.freeze({
  status: 'decoded',
  obsDomainId: 0x2b000003,
  obsPointId: 1012,
  appId: 43,
  app: 'acl-est',
  message: 'Dropped by network policy "deny-all" in namespace shop — ünïcode\tand \\',
  action: 'drop',
  datapath: Object.freeze({ key: 3, switch: 'worker-1', network: 'default' }),
});
const pod: Endpoint = Object.freeze({
  kind: 'pod',
  ip: '10.244.1.5',
  namespace: 'shop',
  name: 'backend "1"',
  network: 'default',
  port: 'shop_backend',
});
const outside: Endpoint = Object.freeze({ kind: 'external', ip: '203.0.113.9' });

const verdicts = ['allow', 'drop', 'pass', 'reject', 'unknown'] as const;
const arbitraryStep: fc.Arbitrary<VerdictStep> = fc.record(
  {
    verdict: fc.constantFrom(...verdicts),
    text: fc.string(),
    policy: fc.string(),
    event: fc.constant(decodedEvent),
    cookie: fc.record({ obsDomainId: fc.nat(0xffffffff), obsPointId: fc.nat(0xffffffff) }),
    samples: fc.integer({ min: 1, max: 5 }),
  },
  { requiredKeys: ['verdict', 'text', 'policy', 'samples'] },
);

describe('JsonFormatter', () => {
  it('writes what the JSON.stringify-based formatter wrote, for any packet, chain, endpoints and interface name', () => {
    fc.assert(
      fc.property(
        fc.record({
          frame: fc.constantFrom(...craftedFrames),
          timestampNs: fc.bigInt({ min: 0n, max: 4_102_444_800_000_000_000n }),
          chain: fc.array(arbitraryStep, { minLength: 1, maxLength: 3 }),
          src: fc.option(fc.constantFrom(pod, outside), { nil: undefined }),
          dst: fc.option(fc.constantFrom(pod, outside), { nil: undefined }),
          iface: fc.option(fc.string(), { nil: undefined }),
          oifindex: fc.option(fc.nat(0xffff), { nil: undefined }),
          nsid: fc.option(fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }), { nil: undefined }),
          cookie: fc.option(fc.uint8Array({ maxLength: 16 }), { nil: undefined }),
          lazy: fc.boolean(),
        }),
        ({ frame, timestampNs, chain, src, dst, iface, oifindex, nsid, cookie, lazy }) => {
          const plain: PsampleMessage = {
            command: 'sample',
            group: 10,
            groupSeq: 1,
            iifindex: 7,
            oifindex,
            origSize: 1500,
            rate: 1,
            probability: false,
            timestampNs,
            proto: frame.proto,
            data: frame.bytes,
            userCookie: cookie,
          };
          const sample = lazy ? delivered(plain) : plain;
          const event: NetworkEvent = {
            timestampNs,
            group: 10,
            iifindex: 7,
            oifindex,
            nsid,
            fields: packetFields(frame.bytes, frame.proto),
            packet: decodePacket(frame.bytes, frame.proto),
            src,
            dst,
            verdict: chain.at(-1)!.verdict,
            chain,
            datapath: decodedEvent.datapath,
            samples: [sample],
          };
          // One formatter for many events: its per-second clock must not carry a second over.
          const formatter = new JsonFormatter(() => iface);
          expect(formatter.format(event)).toBe(reference(event, iface));
          const later = { ...event, timestampNs: timestampNs + 999_999_999n };
          expect(formatter.format(later)).toBe(reference(later, iface));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("writes the same of the assembler's events, whose first sample it reads from its batch record", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            frame: fc.constantFrom(...craftedFrames),
            // 0: a kernel before 5.13, whose samples the arrival time stands in for.
            timestampNs: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: (1n << 64n) - 1n })),
            iifindex: fc.nat(0xffff),
            oifindex: fc.option(fc.nat(0xffff), { nil: undefined }),
            origSize: fc.nat(0xffffffff),
            rate: fc.nat(0xffffffff),
            probability: fc.boolean(),
            cookie: fc.option(fc.oneof(fc.uint8Array({ minLength: 8, maxLength: 8 }), fc.uint8Array({ maxLength: 16 })), {
              nil: undefined,
            }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.option(fc.string(), { nil: undefined }),
        (picks, iface) => {
          const messages = picks.map(({ frame, cookie, ...rest }) =>
            encodePsample({ ...rest, group: 9, proto: frame.proto, data: frame.bytes, userCookie: cookie }),
          );
          const [buffer, count] = addon.decode(Buffer.concat(messages), 0, statValues());
          const events: NetworkEvent[] = [];
          const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
          assembler.on('event', (event) => events.push(event));
          assembler.pushBatch(new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN));
          expect(events).toHaveLength(picks.length);
          const formatter = new JsonFormatter(() => iface);
          for (const event of events) expect(formatter.format(event)).toBe(reference(event, iface));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('EventJsonWriter, the native line writer', () => {
  const { slot: SLOT, slots: SLOTS, maxPieces } = addon.EventJsonWriter;
  const numbers = (): Float64Array => {
    const n = new Float64Array(SLOTS).fill(-1);
    for (const name of [
      'outAt',
      'timeHigh',
      'timeLow',
      'group',
      'iifindex',
      'hasNsid',
      'nsid',
      'origSize',
      'rate',
      'probability',
      'samples',
    ] as const) {
      n[SLOT[name]] = 0;
    }
    n[SLOT.head] = 0;
    n[SLOT.steps] = 1;
    return n;
  };

  it('refuses pieces it was never given, ids past its table and records outside their batch, with usage errors', () => {
    const writer = new addon.EventJsonWriter();
    const out = Buffer.alloc(4096);
    expect(() => writer.write(out, numbers())).toThrow(/piece 0 is not set/);
    writer.setPiece(0, Buffer.from(',"verdict":"unknown","message":"x"'));
    writer.setPiece(1, Buffer.from(',"chain":[]'));
    expect(writer.write(out, numbers())).toBeGreaterThan(0);
    expect(() => writer.setPiece(maxPieces, Buffer.from('x'))).toThrow(TypeError);
    const n = numbers();
    n[SLOT.src] = 7;
    expect(() => writer.write(out, n)).toThrow(/piece 7 is not set/);
    const record = numbers();
    record[SLOT.record] = 4;
    expect(() => writer.write(out, record, undefined, new Uint8Array(16))).toThrow(RangeError);
    writer.clearPieces();
    expect(() => writer.write(out, numbers())).toThrow(/piece 0 is not set/);
  });

  it('says how much a line needs that does not fit, and never writes before where it was told to', () => {
    const writer = new addon.EventJsonWriter();
    writer.setPiece(0, Buffer.from(',"verdict":"unknown","message":"x"'));
    writer.setPiece(1, Buffer.from(',"chain":[]'));
    const whole = Buffer.alloc(4096);
    const end = writer.write(whole, numbers());
    const small = Buffer.alloc(end + 2, 0xee);
    const at = numbers();
    at[SLOT.outAt] = 3;
    expect(writer.write(small, at)).toBe(-end);
    expect([...small.subarray(0, 3)]).toEqual([0xee, 0xee, 0xee]);
    const room = Buffer.alloc(end + 3, 0xee);
    expect(writer.write(room, at)).toBe(end + 3);
    expect(room.subarray(3).toString()).toBe(whole.subarray(0, end).toString());
  });

  it('starts its pieces over when the table is full, and every line stays right', () => {
    const formatter = new JsonFormatter(() => undefined);
    const frame = craftedFrames[0]!;
    const base: NetworkEvent = {
      timestampNs: 1_750_000_000_000_000_000n,
      group: 1,
      iifindex: 2,
      fields: packetFields(frame.bytes, frame.proto),
      packet: decodePacket(frame.bytes, frame.proto),
      verdict: 'allow',
      chain: [{ verdict: 'allow', text: 'Allowed', policy: 'np:web', samples: 1 }],
      samples: [
        {
          command: 'sample',
          group: 1,
          groupSeq: 0,
          iifindex: 2,
          origSize: 60,
          rate: 1,
          probability: false,
          timestampNs: 0n,
          proto: frame.proto,
          data: frame.bytes,
        },
      ],
    };
    // Each event a new endpoint: more pieces than the table holds.
    for (let i = 0; i < maxPieces + 10; i++) {
      const event = { ...base, src: Object.freeze({ kind: 'external' as const, ip: `10.0.${i >> 8}.${i & 255}` }) };
      const line = formatter.format(event);
      if (i % 4096 === 0 || i >= maxPieces - 10) expect(line).toBe(reference(event, undefined));
    }
  });
});

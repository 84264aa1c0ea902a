import fc from 'fast-check';
import { encodePsample, type PsampleMessage } from '../../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../../src/native/binding';
import { PsampleBatch } from '../../../src/psample/batch';
import { statValues } from '../../../src/psample/stats';
import { icmpEcho, tcpSyn, udp } from '../../cli/support/frames';

// Random psample packets for the tests that compare the native paths with the per-packet path
// they replace: each packet's samples, cookies, timing and sampling, cut into batches by the
// addon's own parser.

export const T0 = 1_750_000_000_000_000_000n;
export const MS = 1_000_000n;

export function batchOf(messages: readonly Partial<PsampleMessage>[]): PsampleBatch {
  const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => encodePsample(m))), 0, statValues());
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
}

const cookieOf = (kind: number): Uint8Array | undefined =>
  kind === 0
    ? undefined
    : kind === 1
      ? Uint8Array.from([1, 2, 3, 4]) // not an OVS cookie
      : Uint8Array.from([0x02, 0, 0, kind & 1, 0, 0, 0, kind]); // two datapaths

/** Ethernet + IPv6 + UDP from fd00::(1 + variant % 2) to fd00::1:(1 + variant % 3): the native paths key on 16-byte addresses. */
function udp6(variant: number): Uint8Array {
  const frame = new Uint8Array(14 + 40 + 8);
  const view = new DataView(frame.buffer);
  view.setUint16(12, 0x86dd);
  view.setUint32(14, 0x60000000);
  view.setUint16(18, 8); // payload length
  frame[20] = 17; // next header: UDP
  frame[21] = 64;
  frame[22] = 0xfd;
  frame[37] = 1 + (variant % 2);
  frame[38] = 0xfd;
  frame[51] = 1;
  frame[53] = 1 + (variant % 3);
  view.setUint16(54, 5000 + variant);
  view.setUint16(56, 53);
  view.setUint16(58, 8);
  return frame;
}

/** Ethernet + ARP request from 10.0.0.(1 + variant % 2) for 10.0.1.(1 + variant % 3): its addresses are ARP's. */
function arp(variant: number): Uint8Array {
  const frame = new Uint8Array(14 + 28);
  const view = new DataView(frame.buffer);
  view.setUint16(12, 0x0806);
  view.setUint16(14, 1); // Ethernet
  view.setUint16(16, 0x0800);
  frame[18] = 6;
  frame[19] = 4;
  view.setUint16(20, 1); // request
  frame.set([10, 0, 0, 1 + (variant % 2)], 28);
  frame.set([10, 0, 1, 1 + (variant % 3)], 38);
  return frame;
}

const frameOf = (kind: number, variant: number): Uint8Array => {
  const src = `10.0.0.${1 + (variant % 2)}`;
  const dst = `10.0.1.${1 + (variant % 3)}`;
  if (kind === 0) return tcpSyn({ src, dst, srcPort: 40_000 + variant, dstPort: 80 + (variant % 2) });
  if (kind === 1) return udp({ src, dst, srcPort: 5000 + variant, dstPort: 53 });
  if (kind === 3) return udp6(variant);
  if (kind === 4) return arp(variant);
  return icmpEcho({ src, dst, seq: variant });
};

// A packet: its frame, then each sample's cookie, time after the packet's and sampling.
export const packetArb = fc.record({
  frame: fc.nat(4),
  variant: fc.nat(5),
  group: fc.constantFrom(7, 9),
  iifindex: fc.nat(2),
  atMs: fc.nat(300),
  // Integer weights: their sums do not depend on the order they are added in.
  sampling: fc.constantFrom({ rate: 0, probability: false }, { rate: 10, probability: false }, { rate: 0xffffffff, probability: true }),
  samples: fc.array(fc.record({ cookie: fc.nat(5), laterMs: fc.nat(80) }), { minLength: 1, maxLength: 4 }),
});

export type PacketSpec = typeof packetArb extends fc.Arbitrary<infer T> ? T : never;

export function messagesOf(packets: readonly PacketSpec[]): Partial<PsampleMessage>[] {
  const messages: { at: number; message: Partial<PsampleMessage> }[] = [];
  for (const p of packets) {
    const data = frameOf(p.frame, p.variant);
    for (const s of p.samples) {
      const at = p.atMs + s.laterMs;
      const userCookie = cookieOf(s.cookie);
      messages.push({
        at,
        message: {
          group: p.group,
          iifindex: p.iifindex,
          proto: 0x800,
          data,
          ...(userCookie === undefined ? {} : { userCookie }),
          timestampNs: T0 + BigInt(at) * MS,
          ...p.sampling,
        },
      });
    }
  }
  // In kernel time order, as they arrive.
  return messages.sort((a, b) => a.at - b.at).map((m) => m.message);
}

export function batchesOf(messages: readonly Partial<PsampleMessage>[], cuts: readonly number[]): PsampleBatch[] {
  const batches: PsampleBatch[] = [];
  let from = 0;
  for (const cut of [...cuts.map((c) => c % (messages.length + 1)).sort((a, b) => a - b), messages.length]) {
    if (cut > from) batches.push(batchOf(messages.slice(from, cut)));
    from = Math.max(from, cut);
  }
  return batches;
}

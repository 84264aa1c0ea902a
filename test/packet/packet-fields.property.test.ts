import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { encodePsample } from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import type { NetworkEvent } from '../../src/events/network-event';
import { JsonFormatter } from '../../src/output/event-json';
import { PACKET_FIELD_WORDS } from '../../src/native/abi.generated';
import { packetFields, PacketFieldsView, type PacketFields } from '../../src/packet/fields';
import { decodePacket, type DecodedPacket } from '../../src/packet/index.js';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { capturedFrames, craftedFrames } from './packet-frames.js';

// A packet is decoded once, natively, into words (native/packet/packet_fields.h) that TypeScript
// reads and the native writers read again. What each reader gets must be what the full decode
// says, and what the writers write must be what they wrote from a fresh decode, byte for byte.
// The old TypeScript forms are kept here as the references.

const PROTOCOL_NAMES: Readonly<Record<number, string>> = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 58: 'ICMPv6', 132: 'SCTP' };

/** The human column's tuple as the native writers write it (native/packet/packet_text.h), from a packet's words. */
function packetTuple(fields: PacketFields): string {
  if (!(fields instanceof PacketFieldsView)) throw new Error('the tuple needs the packet decoded natively');
  return addon.packetTuple(fields.words, fields.slot, fields.data);
}

/** The human column's tuple as src/output/packet-tuple.ts wrote it from decodePacket(). */
function referenceTuple(packet: DecodedPacket): string {
  const network = packet.network;
  if (network === undefined) return `ethertype 0x${packet.etherType.toString(16).padStart(4, '0')}`;
  if (network.kind === 'arp') return `ARP ${network.senderIp ?? '?'} → ${network.targetIp ?? '?'}`;
  const transport = packet.transport;
  const name = PROTOCOL_NAMES[network.protocol] ?? `proto ${network.protocol}`;
  if (transport !== undefined && 'srcPort' in transport) {
    const [open, close] = network.kind === 'ipv6' ? ['[', ']'] : ['', ''];
    return `${name} ${open}${network.src}${close}:${transport.srcPort} → ${open}${network.dst}${close}:${transport.dstPort}`;
  }
  if (transport !== undefined && (transport.kind === 'icmp' || transport.kind === 'icmpv6')) {
    return `${name} ${network.src} → ${network.dst} ${transport.name ?? `type ${transport.type}`}`;
  }
  return `${name} ${network.src} → ${network.dst}`;
}

/** The fields as the events, filters and formatters read them from decodePacket() before. */
function referenceFields(packet: DecodedPacket): PacketFields {
  const network = packet.network;
  const transport = packet.transport;
  const ip = network !== undefined && network.kind !== 'arp' ? network : undefined;
  const ports = transport !== undefined && 'srcPort' in transport ? transport : undefined;
  const icmp = transport?.kind === 'icmp' || transport?.kind === 'icmpv6' ? transport : undefined;
  return {
    link: packet.link,
    etherType: packet.etherType,
    length: packet.length,
    vlan: packet.ethernet?.vlans[0]?.vid,
    network: network?.kind,
    src: network === undefined ? undefined : network.kind === 'arp' ? network.senderIp : network.src,
    dst: network === undefined ? undefined : network.kind === 'arp' ? network.targetIp : network.dst,
    protocol: ip?.protocol,
    ttl: ip === undefined ? undefined : ip.kind === 'ipv4' ? ip.ttl : ip.hopLimit,
    srcPort: ports?.srcPort,
    dstPort: ports?.dstPort,
    icmpType: icmp?.type,
    icmpCode: icmp?.code,
    truncated: packet.truncated,
  };
}

// watch's JSON line of an event of these fields, from its last member before the packet on.
const formatter = new JsonFormatter(() => undefined);
const tailOf = (fields: PacketFields): string => {
  const event: NetworkEvent = {
    timestampNs: 0n,
    group: 1,
    iifindex: 1,
    fields,
    packet: undefined,
    verdict: 'unknown',
    chain: [{ verdict: 'unknown', text: 'No OVS cookie', policy: '-', samples: 1 }],
    samples: [
      {
        command: 'sample',
        group: 1,
        groupSeq: 0,
        iifindex: 1,
        origSize: 0,
        rate: 1,
        probability: false,
        timestampNs: 0n,
        proto: 0,
        data: new Uint8Array(0),
      },
    ],
  };
  const line = formatter.format(event);
  const last = ',"samples":1';
  return line.slice(line.lastIndexOf(last) + last.length);
};
const referenceTail = (data: Uint8Array, proto: number): string =>
  `,"packet":${addon.packetJson(data, proto)},"data":"${Buffer.from(data).toString('hex')}"}\n`;

function check(data: Uint8Array, proto: number): void {
  const packet = decodePacket(data, proto);
  const fields = packetFields(data, proto);
  expect(fields.toObject()).toEqual(referenceFields(packet));
  expect(packetTuple(fields)).toBe(referenceTuple(packet));
  expect(tailOf(fields)).toBe(referenceTail(data, proto));
}

const frames = [...craftedFrames, ...capturedFrames()];
const PROTOS = [0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x1234];

describe('the packet decoded once, read as fields and written again', () => {
  it('every test frame, cut at every length, as every proto: fields, tuple and JSON as from a fresh decode', () => {
    for (const frame of frames) {
      for (const proto of new Set([frame.proto, 0x0800, 0x86dd, 0x0806])) {
        for (let length = 0; length <= frame.bytes.length; length++) check(frame.bytes.subarray(0, length), proto);
      }
    }
  });

  it('any bytes, any proto', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.constantFrom(...PROTOS), (bytes, proto) => check(bytes, proto)),
      { numRuns: 3000 },
    );
  });

  it("a batch's packets decoded together read as each alone (repeated packets copied, group events skipped)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ frame: fc.constantFrom(...frames), repeat: fc.boolean(), group: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        (picks) => {
          const messages = picks.flatMap(({ frame, repeat, group }) => {
            const sample = { proto: frame.proto, data: frame.bytes };
            return [...(group ? [{ command: 'new-group' as const, group: 3 }] : []), sample, ...(repeat ? [sample] : [])];
          });
          const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => encodePsample(m))), 0, statValues());
          const batch = new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
          let index = 0;
          for (const sample of batch) {
            if (sample.command === 'sample') {
              const fields = batch.packetFieldsAt(index, sample.record().at);
              const alone = packetFields(sample.data, sample.proto);
              expect(fields.toObject()).toEqual(alone.toObject());
              expect(fields.hash).toBe(alone.hash);
              expect(packetTuple(fields)).toBe(packetTuple(alone));
              expect(tailOf(fields)).toBe(referenceTail(sample.data, sample.proto));
            }
            index++;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('words anyone wrote over never make the writers read outside the packet: they write JSON all the same', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...frames),
        fc.array(fc.tuple(fc.nat(PACKET_FIELD_WORDS - 1), fc.oneof(fc.nat(0xffffffff), fc.nat(200))), { minLength: 1, maxLength: 6 }),
        (frame, writes) => {
          const fields = packetFields(frame.bytes, frame.proto);
          for (const [index, value] of writes) fields.words[index] = value;
          const view = new PacketFieldsView(fields.words, 0, '', frame.bytes);
          const tail = tailOf(view);
          expect(tail.startsWith(',"packet":')).toBe(true);
          expect(() => JSON.parse(`{${tail.slice(1, -2)}}`) as unknown).not.toThrow();
          expect(packetTuple(view)).not.toMatch(/\n/);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

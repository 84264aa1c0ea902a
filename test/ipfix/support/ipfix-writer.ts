// IPFIX messages made to order (RFC 7011), for tests that need what no exporter here sends:
// withdrawals, unknown templates, sequence gaps, a non-zero notSentPacketTotalCount, broken lengths.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Field {
  readonly id: number;
  readonly length: number;
  readonly enterprise?: number;
}

export type Set = { readonly id: number; readonly body: Uint8Array };

const u16 = (value: number): number[] => [value >> 8, value & 0xff];
const u32 = (value: number): number[] => [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];

function fieldBytes(fields: readonly Field[]): number[] {
  return fields.flatMap((f) =>
    f.enterprise === undefined ? [...u16(f.id), ...u16(f.length)] : [...u16(f.id | 0x8000), ...u16(f.length), ...u32(f.enterprise)],
  );
}

export function templateSet(templates: readonly { id: number; fields: readonly Field[] }[]): Set {
  return { id: 2, body: Uint8Array.from(templates.flatMap((t) => [...u16(t.id), ...u16(t.fields.length), ...fieldBytes(t.fields)])) };
}

export function optionsTemplateSet(id: number, scope: readonly Field[], fields: readonly Field[]): Set {
  return {
    id: 3,
    body: Uint8Array.from([...u16(id), ...u16(scope.length + fields.length), ...u16(scope.length), ...fieldBytes([...scope, ...fields])]),
  };
}

export function withdrawalSet(templateIds: readonly number[], options = false): Set {
  return { id: options ? 3 : 2, body: Uint8Array.from(templateIds.flatMap((id) => [...u16(id), 0, 0])) };
}

export function dataSet(templateId: number, records: readonly Uint8Array[]): Set {
  return { id: templateId, body: Uint8Array.from(records.flatMap((r) => [...r])) };
}

export interface Header {
  readonly sequence: number;
  readonly domain: number;
  readonly exportTime?: number;
}

export function message(header: Header, sets: readonly Set[]): Buffer {
  const body = sets.flatMap((s) => [...u16(s.id), ...u16(s.body.length + 4), ...s.body]);
  const length = 16 + body.length;
  return Buffer.from([
    ...u16(10),
    ...u16(length),
    ...u32(header.exportTime ?? 1_795_000_000),
    ...u32(header.sequence),
    ...u32(header.domain),
    ...body,
  ]);
}

/** Big-endian bytes of an unsigned value in `length` bytes. */
export function uint(value: number, length: number): number[] {
  const bytes: number[] = [];
  for (let i = length - 1; i >= 0; i--) bytes.push(Math.floor(value / 256 ** i) % 256);
  return bytes;
}

/** A variable-length field's bytes (1-byte length, or 255 and a 2-byte length). */
export function variable(bytes: readonly number[]): number[] {
  return bytes.length < 255 ? [bytes.length, ...bytes] : [255, ...u16(bytes.length), ...bytes];
}

/** A small flow template: observationPointId, IPv4 addresses, protocol, ports, packetDeltaCount. */
export const FLOW_FIELDS: readonly Field[] = [
  { id: 138, length: 4 },
  { id: 8, length: 4 },
  { id: 12, length: 4 },
  { id: 4, length: 1 },
  { id: 7, length: 2 },
  { id: 11, length: 2 },
  { id: 2, length: 8 },
];

export function flowRecord(
  point: number,
  src: string,
  dst: string,
  protocol: number,
  srcPort: number,
  dstPort: number,
  packets = 1,
): Uint8Array {
  const ip = (text: string): number[] => text.split('.').map(Number);
  return Uint8Array.from([
    ...uint(point, 4),
    ...ip(src),
    ...ip(dst),
    protocol,
    ...uint(srcPort, 2),
    ...uint(dstPort, 2),
    ...uint(packets, 8),
  ]);
}

/** The real OVS 3.1 datagrams of test/fixtures/ipfix (source port and bytes). */
export function ovsFixture(): { port: number; bytes: Buffer }[] {
  const text = readFileSync(join(__dirname, '..', '..', 'fixtures', 'ipfix', 'ovs-3.1-dummy.txt'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [port, hex] = line.split(' ');
      return { port: Number(port), bytes: Buffer.from(hex!, 'hex') };
    });
}

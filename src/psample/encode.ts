import { endianness } from 'node:os';

import { ipv4Bytes, ipv6Bytes } from './address-bytes';
import { InvalidOptionError } from './errors';
import type { PsampleMessage, PsampleTunnel } from './types';

/** The psample family id Debian's 6.12 kernel assigned in the captured samples; any id >= 16 works for injection. */
export const DEFAULT_INJECTION_FAMILY_ID = 34;

const COMMAND_NUMBERS = { sample: 0, 'get-group': 1, 'new-group': 2, 'del-group': 3 } as const;
const NLA_F_NESTED = 0x8000;
// Netlink headers and attributes are in host byte order (some attributes are big-endian by definition).
const HOST_LITTLE_ENDIAN = endianness() === 'LE';

function inRange(type: number, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new InvalidOptionError(`attribute ${type & 0x7fff}: ${value} does not fit (0 to ${max})`);
  }
  return value;
}

class AttributeWriter {
  private chunks: Uint8Array[] = [];
  length = 0;

  private push(type: number, payload: Uint8Array): void {
    const total = 4 + payload.byteLength;
    if (total > 0xffff) {
      throw new InvalidOptionError(`attribute ${type & 0x7fff} is ${payload.byteLength} bytes: netlink attributes hold at most 65531`);
    }
    const padded = (total + 3) & ~3;
    const chunk = new Uint8Array(padded);
    const view = new DataView(chunk.buffer);
    view.setUint16(0, total, HOST_LITTLE_ENDIAN);
    view.setUint16(2, type, HOST_LITTLE_ENDIAN);
    chunk.set(payload, 4);
    this.chunks.push(chunk);
    this.length += padded;
  }

  bytes(type: number, value: Uint8Array): void {
    this.push(type, value);
  }
  flag(type: number): void {
    this.push(type, new Uint8Array(0));
  }
  u8(type: number, value: number): void {
    this.push(type, Uint8Array.of(inRange(type, value, 0xff)));
  }
  u16(type: number, value: number, bigEndian = false): void {
    inRange(type, value, 0xffff);
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, value, !bigEndian && HOST_LITTLE_ENDIAN);
    this.push(type, b);
  }
  u32(type: number, value: number): void {
    inRange(type, value, 0xffffffff);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, value, HOST_LITTLE_ENDIAN);
    this.push(type, b);
  }
  u64(type: number, value: bigint, bigEndian = false): void {
    if (value < 0n || value > 0xffff_ffff_ffff_ffffn) {
      throw new InvalidOptionError(`attribute ${type}: ${value} does not fit in 64 bits`);
    }
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, value, !bigEndian && HOST_LITTLE_ENDIAN);
    this.push(type, b);
  }
  nested(type: number, inner: AttributeWriter): void {
    this.push(type | NLA_F_NESTED, inner.concat());
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }
}

function tunnelAttributes(t: PsampleTunnel): AttributeWriter {
  const a = new AttributeWriter();
  if (t.id !== undefined) a.u64(0, t.id, true);
  if (t.ipv4Src !== undefined) a.bytes(1, ipv4Bytes(t.ipv4Src));
  if (t.ipv4Dst !== undefined) a.bytes(2, ipv4Bytes(t.ipv4Dst));
  if (t.tos !== undefined) a.u8(3, t.tos);
  if (t.ttl !== undefined) a.u8(4, t.ttl);
  if (t.dontFragment) a.flag(5);
  if (t.csum) a.flag(6);
  if (t.oam) a.flag(7);
  if (t.geneveOptions !== undefined) a.bytes(8, t.geneveOptions);
  if (t.tpSrc !== undefined) a.u16(9, t.tpSrc, true);
  if (t.tpDst !== undefined) a.u16(10, t.tpDst, true);
  if (t.vxlanGbp !== undefined) {
    const vxlan = new AttributeWriter();
    vxlan.u32(1, t.vxlanGbp);
    a.nested(11, vxlan);
  }
  if (t.ipv6Src !== undefined) a.bytes(12, ipv6Bytes(t.ipv6Src));
  if (t.ipv6Dst !== undefined) a.bytes(13, ipv6Bytes(t.ipv6Dst));
  if (t.erspanOptions !== undefined) a.bytes(15, t.erspanOptions);
  if (t.ipv4InfoBridge) a.flag(16);
  return a;
}

/**
 * Builds one psample netlink message the way the kernel lays it out (attribute order of
 * net/psample/psample.c), for injection through a NETLINK_USERSOCK or generic-netlink source.
 */
export function encodePsample(message: Partial<PsampleMessage>, options: { familyId?: number } = {}): Uint8Array {
  const command = message.command ?? 'sample';
  const a = new AttributeWriter();
  if (command !== 'sample') {
    a.u32(3, message.group ?? 0);
    a.u32(7, message.groupRefcount ?? 0);
  } else {
    if (message.iifindex) a.u16(0, message.iifindex);
    if (message.oifindex !== undefined) a.u16(1, message.oifindex);
    a.u32(5, message.rate ?? 1);
    a.u32(2, message.origSize ?? message.data?.byteLength ?? 0);
    a.u32(3, message.group ?? 0);
    a.u32(4, message.groupSeq ?? 0);
    if (message.outTc !== undefined) a.u16(10, message.outTc);
    if (message.outTcOcc !== undefined) a.u64(11, message.outTcOcc);
    if (message.latencyNs !== undefined) a.u64(12, message.latencyNs);
    if (message.timestampNs !== undefined) a.u64(13, message.timestampNs);
    if (message.proto !== undefined) a.u16(14, message.proto);
    if (message.data !== undefined && message.data.byteLength > 0) a.bytes(6, message.data);
    if (message.tunnel !== undefined) a.nested(8, tunnelAttributes(message.tunnel));
    if (message.userCookie !== undefined) a.bytes(15, message.userCookie);
    if (message.probability) a.flag(16);
  }
  const out = new Uint8Array(20 + a.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, out.byteLength, HOST_LITTLE_ENDIAN);
  view.setUint16(4, options.familyId ?? DEFAULT_INJECTION_FAMILY_ID, HOST_LITTLE_ENDIAN);
  out[16] = COMMAND_NUMBERS[command];
  out[17] = 1;
  out.set(a.concat(), 20);
  return out;
}

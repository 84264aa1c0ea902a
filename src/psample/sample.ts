import { inspect } from 'node:util';

import { RECORD, RECORD_FLAGS, TUNNEL_BLOCK, TUNNEL_BLOCK_BYTES } from '../native/abi.generated';
import { addon } from '../native/binding';
import type { PsampleCommand, PsampleMessage, PsampleTunnel } from './types';

// psample attribute numbers, as bits of RECORD.present
const ATTR_OIFINDEX = 1 << 1;
const ATTR_GROUP_REFCOUNT = 1 << 7;
const ATTR_OUT_TC = 1 << 10;
const ATTR_OUT_TC_OCC = 1 << 11;
const ATTR_LATENCY = 1 << 12;

// PSAMPLE_TUNNEL_KEY_ATTR_* bits of TUNNEL_BLOCK.present
const TUN_ID = 1 << 0;
const TUN_IPV4_SRC = 1 << 1;
const TUN_IPV4_DST = 1 << 2;
const TUN_TOS = 1 << 3;
const TUN_TTL = 1 << 4;
const TUN_DONT_FRAGMENT = 1 << 5;
const TUN_CSUM = 1 << 6;
const TUN_OAM = 1 << 7;
const TUN_GENEVE_OPTS = 1 << 8;
const TUN_TP_SRC = 1 << 9;
const TUN_TP_DST = 1 << 10;
const TUN_VXLAN_OPTS = 1 << 11;
const TUN_IPV6_SRC = 1 << 12;
const TUN_IPV6_DST = 1 << 13;
const TUN_ERSPAN_OPTS = 1 << 15;
const TUN_IPV4_INFO_BRIDGE = 1 << 16;

const COMMANDS: readonly PsampleCommand[] = ['sample', 'get-group', 'new-group', 'del-group'];

/** A tunnel block (native/wire/batch_layout.h) at `at` in `view`; its option offsets count from `record`. */
function readTunnel(view: DataView, record: number, at: number, le: boolean): PsampleTunnel {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (at + TUNNEL_BLOCK_BYTES > view.byteLength) throw new RangeError('tunnel block outside its batch');
  const present = view.getUint32(at + TUNNEL_BLOCK.present, le);
  const has = (bit: number): boolean => (present & bit) !== 0;
  const optionBytes = (offset: number, length: number): Uint8Array =>
    copyOf(bytes, record + view.getUint32(at + offset, le), view.getUint32(at + length, le));
  return {
    id: has(TUN_ID) ? view.getBigUint64(at + TUNNEL_BLOCK.id, le) : undefined,
    ipv4Src: has(TUN_IPV4_SRC) ? addon.addressText(bytes, at + TUNNEL_BLOCK.ipv4Src, 4) : undefined,
    ipv4Dst: has(TUN_IPV4_DST) ? addon.addressText(bytes, at + TUNNEL_BLOCK.ipv4Dst, 4) : undefined,
    ipv6Src: has(TUN_IPV6_SRC) ? addon.addressText(bytes, at + TUNNEL_BLOCK.ipv6Src, 16) : undefined,
    ipv6Dst: has(TUN_IPV6_DST) ? addon.addressText(bytes, at + TUNNEL_BLOCK.ipv6Dst, 16) : undefined,
    tos: has(TUN_TOS) ? view.getUint8(at + TUNNEL_BLOCK.tos) : undefined,
    ttl: has(TUN_TTL) ? view.getUint8(at + TUNNEL_BLOCK.ttl) : undefined,
    tpSrc: has(TUN_TP_SRC) ? view.getUint16(at + TUNNEL_BLOCK.tpSrc, le) : undefined,
    tpDst: has(TUN_TP_DST) ? view.getUint16(at + TUNNEL_BLOCK.tpDst, le) : undefined,
    dontFragment: has(TUN_DONT_FRAGMENT),
    csum: has(TUN_CSUM),
    oam: has(TUN_OAM),
    ipv4InfoBridge: has(TUN_IPV4_INFO_BRIDGE),
    geneveOptions: has(TUN_GENEVE_OPTS) ? optionBytes(TUNNEL_BLOCK.geneveOffset, TUNNEL_BLOCK.geneveLength) : undefined,
    vxlanGbp: has(TUN_VXLAN_OPTS) ? view.getUint32(at + TUNNEL_BLOCK.vxlanGbp, le) : undefined,
    erspanOptions: has(TUN_ERSPAN_OPTS) ? optionBytes(TUNNEL_BLOCK.erspanOffset, TUNNEL_BLOCK.erspanLength) : undefined,
  };
}

function copyOf(bytes: Uint8Array, offset: number, length: number): Uint8Array {
  if (offset + length > bytes.byteLength) throw new RangeError('bytes outside their batch');
  return bytes.slice(offset, offset + length);
}

/** @internal The input ifindex of the record at byte `at`: what a packet's event reads without making its sample. */
export function recordIifindex(view: DataView, at: number, littleEndian: boolean): number {
  return view.getUint32(at + RECORD.ifindexes, littleEndian) & 0xffff;
}

/**
 * One psample message as the reader thread handed it over: a view of its region of a batch
 * buffer (native/wire/batch_layout.h) that decodes each field when it is read, so a consumer pays only
 * for the fields it reads. `data`, `userCookie` and `tunnel` are made once, on first read, and
 * are views into (`data`, `userCookie`) or copies of (the tunnel) the batch.
 *
 * A sample keeps its batch's buffer (at most 64 KiB, shared with the samples around it) alive as
 * long as it is itself kept, as a slice of a stream chunk keeps the chunk. To keep many samples
 * for long, keep `sample.slice()`, which holds its own bytes only. The fields are accessors on the
 * prototype: `{...sample}` and structuredClone() see none of them; `toObject()` is the plain form.
 */
export class PsampleSample implements PsampleMessage {
  readonly #view: DataView;
  readonly #at: number;
  readonly #le: boolean;
  #data: Uint8Array | undefined;
  #userCookie: Uint8Array | null | undefined;
  #tunnel: PsampleTunnel | null | undefined;

  /** @internal `at`: where the message's record starts in `view`; `le`: the byte order of its numbers. */
  constructor(view: DataView, at: number, le: boolean) {
    this.#view = view;
    this.#at = at;
    this.#le = le;
  }

  #u32(field: number): number {
    return this.#view.getUint32(this.#at + field, this.#le);
  }

  get command(): PsampleCommand {
    return COMMANDS[(this.#u32(RECORD.kindCmdFlags) >>> 8) & 0xff] ?? 'sample';
  }

  get group(): number {
    return this.#u32(RECORD.group);
  }

  get groupSeq(): number {
    return this.#u32(RECORD.groupSeq);
  }

  get iifindex(): number {
    return recordIifindex(this.#view, this.#at, this.#le);
  }

  get oifindex(): number | undefined {
    return this.#u32(RECORD.present) & ATTR_OIFINDEX ? this.#u32(RECORD.ifindexes) >>> 16 : undefined;
  }

  get origSize(): number {
    return this.#u32(RECORD.origsize);
  }

  get rate(): number {
    return this.#u32(RECORD.rate);
  }

  get probability(): boolean {
    return (this.#u32(RECORD.kindCmdFlags) & RECORD_FLAGS.probability) !== 0;
  }

  get timestampNs(): bigint {
    return this.#view.getBigUint64(this.#at + RECORD.timestamp, this.#le);
  }

  get latencyNs(): bigint | undefined {
    return this.#u32(RECORD.present) & ATTR_LATENCY ? this.#view.getBigUint64(this.#at + RECORD.latency, this.#le) : undefined;
  }

  get outTc(): number | undefined {
    return this.#u32(RECORD.present) & ATTR_OUT_TC ? this.#u32(RECORD.outTcProto) & 0xffff : undefined;
  }

  get outTcOcc(): bigint | undefined {
    return this.#u32(RECORD.present) & ATTR_OUT_TC_OCC ? this.#view.getBigUint64(this.#at + RECORD.outTcOcc, this.#le) : undefined;
  }

  get proto(): number {
    return this.#u32(RECORD.outTcProto) >>> 16;
  }

  get data(): Uint8Array {
    return (this.#data ??= this.#bytes(RECORD.dataOffset, this.#u32(RECORD.dataLength)));
  }

  get userCookie(): Uint8Array | undefined {
    if (this.#userCookie === undefined) {
      const length = this.#u32(RECORD.cookieLength);
      this.#userCookie = length > 0 ? this.#bytes(RECORD.cookieOffset, length) : null;
    }
    return this.#userCookie ?? undefined;
  }

  get groupRefcount(): number | undefined {
    return this.#u32(RECORD.present) & ATTR_GROUP_REFCOUNT ? this.#u32(RECORD.groupRefcount) : undefined;
  }

  get tunnel(): PsampleTunnel | undefined {
    if (this.#tunnel === undefined) {
      this.#tunnel =
        this.#u32(RECORD.kindCmdFlags) & RECORD_FLAGS.tunnel
          ? readTunnel(this.#view, this.#at, this.#at + this.#u32(RECORD.tunnelOffset), this.#le)
          : null;
    }
    return this.#tunnel ?? undefined;
  }

  get nsid(): number | undefined {
    return this.#u32(RECORD.kindCmdFlags) & RECORD_FLAGS.nsid ? this.#view.getInt32(this.#at + RECORD.nsid, this.#le) : undefined;
  }

  /** @internal Where the message's record is: its buffer, its offset there, its numbers' byte order. */
  record(): { buffer: ArrayBuffer; at: number; littleEndian: boolean } {
    return { buffer: this.#view.buffer as ArrayBuffer, at: this.#view.byteOffset + this.#at, littleEndian: this.#le };
  }

  /** The same message holding only its own bytes (one copy), not its batch's. */
  slice(): PsampleSample {
    const start = this.#view.byteOffset + this.#at;
    const own = this.#view.buffer.slice(start, start + this.#u32(RECORD.length));
    return new PsampleSample(new DataView(own), 0, this.#le);
  }

  /** Every field as a plain object, the bytes copied: for spreading, comparing, structuredClone(). */
  toObject(): PsampleMessage {
    const data = this.data;
    const cookie = this.userCookie;
    const tunnel = this.tunnel;
    return {
      command: this.command,
      group: this.group,
      groupSeq: this.groupSeq,
      iifindex: this.iifindex,
      oifindex: this.oifindex,
      origSize: this.origSize,
      rate: this.rate,
      probability: this.probability,
      timestampNs: this.timestampNs,
      latencyNs: this.latencyNs,
      outTc: this.outTc,
      outTcOcc: this.outTcOcc,
      proto: this.proto,
      data: data.slice(),
      userCookie: cookie?.slice(),
      groupRefcount: this.groupRefcount,
      tunnel: tunnel && { ...tunnel, geneveOptions: tunnel.geneveOptions?.slice(), erspanOptions: tunnel.erspanOptions?.slice() },
      nsid: this.nsid,
    };
  }

  [inspect.custom](depth: number, options: object, inspectValue: typeof inspect): string {
    return `PsampleSample ${inspectValue(this.toObject(), { ...options, depth })}`;
  }

  #bytes(offsetField: number, length: number): Uint8Array {
    const view = this.#view;
    const start = this.#at + this.#u32(offsetField);
    if (start + length > view.byteLength) throw new RangeError('bytes outside their batch');
    return new Uint8Array(view.buffer, view.byteOffset + start, length);
  }
}

import { RECORD, RECORD_BYTES, RECORD_FLAGS, TUNNEL_BLOCK, TUNNEL_BLOCK_BYTES } from '../native/abi.generated';
import { formatIpv4, formatIpv6 } from '../packet/address';
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

function readTunnel(payload: ArrayBuffer, offset: number, littleEndian: boolean): PsampleTunnel {
  const view = new DataView(payload, offset, TUNNEL_BLOCK_BYTES);
  const bytes = new Uint8Array(payload);
  const present = view.getUint32(TUNNEL_BLOCK.present, littleEndian);
  const has = (bit: number): boolean => (present & bit) !== 0;
  const optionBytes = (at: number, length: number): Uint8Array =>
    new Uint8Array(payload, view.getUint32(at, littleEndian), view.getUint32(length, littleEndian));
  return {
    id: has(TUN_ID) ? view.getBigUint64(TUNNEL_BLOCK.id, littleEndian) : undefined,
    ipv4Src: has(TUN_IPV4_SRC) ? formatIpv4(bytes, offset + TUNNEL_BLOCK.ipv4Src) : undefined,
    ipv4Dst: has(TUN_IPV4_DST) ? formatIpv4(bytes, offset + TUNNEL_BLOCK.ipv4Dst) : undefined,
    ipv6Src: has(TUN_IPV6_SRC) ? formatIpv6(bytes, offset + TUNNEL_BLOCK.ipv6Src) : undefined,
    ipv6Dst: has(TUN_IPV6_DST) ? formatIpv6(bytes, offset + TUNNEL_BLOCK.ipv6Dst) : undefined,
    tos: has(TUN_TOS) ? view.getUint8(TUNNEL_BLOCK.tos) : undefined,
    ttl: has(TUN_TTL) ? view.getUint8(TUNNEL_BLOCK.ttl) : undefined,
    tpSrc: has(TUN_TP_SRC) ? view.getUint16(TUNNEL_BLOCK.tpSrc, littleEndian) : undefined,
    tpDst: has(TUN_TP_DST) ? view.getUint16(TUNNEL_BLOCK.tpDst, littleEndian) : undefined,
    dontFragment: has(TUN_DONT_FRAGMENT),
    csum: has(TUN_CSUM),
    oam: has(TUN_OAM),
    ipv4InfoBridge: has(TUN_IPV4_INFO_BRIDGE),
    geneveOptions: has(TUN_GENEVE_OPTS) ? optionBytes(TUNNEL_BLOCK.geneveOffset, TUNNEL_BLOCK.geneveLength) : undefined,
    vxlanGbp: has(TUN_VXLAN_OPTS) ? view.getUint32(TUNNEL_BLOCK.vxlanGbp, littleEndian) : undefined,
    erspanOptions: has(TUN_ERSPAN_OPTS) ? optionBytes(TUNNEL_BLOCK.erspanOffset, TUNNEL_BLOCK.erspanLength) : undefined,
  };
}

/**
 * One batch of the native reader: `count` records (native/batch_layout.h) and the payload area
 * they point into, their numbers in the byte order the addon declares (the host's; a test can
 * hand it the other one). Messages are built on demand.
 */
export class RecordBatch {
  readonly #records: DataView;
  readonly #payload: ArrayBuffer;
  readonly #littleEndian: boolean;
  readonly count: number;

  constructor(records: ArrayBuffer, payload: ArrayBuffer, count: number, littleEndian: boolean) {
    this.#records = new DataView(records);
    this.#payload = payload;
    this.#littleEndian = littleEndian;
    this.count = count;
  }

  /**
   * The message at `index`. Every object has the same keys in the same order (absent values are
   * undefined), so V8 keeps one hidden class for all of them; `data` and `userCookie` are views
   * into the payload.
   */
  message(index: number): PsampleMessage {
    const v = this.#records;
    const le = this.#littleEndian;
    const r = index * RECORD_BYTES;
    const present = v.getUint32(r + RECORD.present, le);
    const kindCmdFlags = v.getUint32(r + RECORD.kindCmdFlags, le);
    const ifindexes = v.getUint32(r + RECORD.ifindexes, le);
    const outTcProto = v.getUint32(r + RECORD.outTcProto, le);
    const cookieLength = v.getUint32(r + RECORD.cookieLength, le);
    return {
      command: COMMANDS[(kindCmdFlags >>> 8) & 0xff] ?? 'sample',
      group: v.getUint32(r + RECORD.group, le),
      groupSeq: v.getUint32(r + RECORD.groupSeq, le),
      iifindex: ifindexes & 0xffff,
      oifindex: present & ATTR_OIFINDEX ? ifindexes >>> 16 : undefined,
      origSize: v.getUint32(r + RECORD.origsize, le),
      rate: v.getUint32(r + RECORD.rate, le),
      probability: (kindCmdFlags & RECORD_FLAGS.probability) !== 0,
      timestampNs: v.getBigUint64(r + RECORD.timestamp, le),
      latencyNs: present & ATTR_LATENCY ? v.getBigUint64(r + RECORD.latency, le) : undefined,
      outTc: present & ATTR_OUT_TC ? outTcProto & 0xffff : undefined,
      outTcOcc: present & ATTR_OUT_TC_OCC ? v.getBigUint64(r + RECORD.outTcOcc, le) : undefined,
      proto: outTcProto >>> 16,
      data: new Uint8Array(this.#payload, v.getUint32(r + RECORD.dataOffset, le), v.getUint32(r + RECORD.dataLength, le)),
      userCookie:
        cookieLength > 0 ? new Uint8Array(this.#payload, v.getUint32(r + RECORD.cookieOffset, le), cookieLength) : undefined,
      groupRefcount: present & ATTR_GROUP_REFCOUNT ? v.getUint32(r + RECORD.groupRefcount, le) : undefined,
      tunnel:
        kindCmdFlags & RECORD_FLAGS.tunnel ? readTunnel(this.#payload, v.getUint32(r + RECORD.tunnelOffset, le), le) : undefined,
      nsid: kindCmdFlags & RECORD_FLAGS.nsid ? v.getInt32(r + RECORD.nsid, le) : undefined,
    };
  }

  /** Every message, in order. */
  messages(): PsampleMessage[] {
    return Array.from({ length: this.count }, (_, i) => this.message(i));
  }
}

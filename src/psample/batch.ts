import { formatIpv4, formatIpv6 } from '../packet/address';
import type { PsampleCommand, PsampleMessage, PsampleTunnel } from './types';

// Mirrors native/sample_batch.h: 24 little-endian 32-bit words per message.
const WORDS = 24;
const PRESENT = 0;
const KIND_CMD_FLAGS = 1;
const GROUP = 2;
const GROUP_SEQ = 3;
const IFINDEXES = 4;
const ORIGSIZE = 5;
const RATE = 6;
const GROUP_REFCOUNT = 7;
const OUT_TC_PROTO = 8;
const NSID = 9;
const TIMESTAMP = 10;
const LATENCY = 12;
const OUT_TC_OCC = 14;
const DATA_OFFSET = 16;
const DATA_LENGTH = 17;
const COOKIE_OFFSET = 18;
const COOKIE_LENGTH = 19;
const TUNNEL_OFFSET = 20;

const FLAG_PROBABILITY = 1 << 16;
const FLAG_NSID = 1 << 18;
const FLAG_TUNNEL = 1 << 19;

// psample attribute numbers, as bits of PRESENT
const ATTR_OIFINDEX = 1 << 1;
const ATTR_GROUP_REFCOUNT = 1 << 7;
const ATTR_OUT_TC = 1 << 10;
const ATTR_OUT_TC_OCC = 1 << 11;
const ATTR_LATENCY = 1 << 12;

// PSAMPLE_TUNNEL_KEY_ATTR_* bits of the tunnel block's present mask
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

function readTunnel(payload: ArrayBuffer, offset: number): PsampleTunnel {
  const view = new DataView(payload, offset, 80);
  const bytes = new Uint8Array(payload);
  const present = view.getUint32(0, true);
  const has = (bit: number): boolean => (present & bit) !== 0;
  const optionBytes = (at: number): Uint8Array =>
    new Uint8Array(payload, view.getUint32(at, true), view.getUint32(at + 4, true));
  return {
    id: has(TUN_ID) ? view.getBigUint64(8, true) : undefined,
    ipv4Src: has(TUN_IPV4_SRC) ? formatIpv4(bytes, offset + 16) : undefined,
    ipv4Dst: has(TUN_IPV4_DST) ? formatIpv4(bytes, offset + 20) : undefined,
    ipv6Src: has(TUN_IPV6_SRC) ? formatIpv6(bytes, offset + 24) : undefined,
    ipv6Dst: has(TUN_IPV6_DST) ? formatIpv6(bytes, offset + 40) : undefined,
    tos: has(TUN_TOS) ? view.getUint8(56) : undefined,
    ttl: has(TUN_TTL) ? view.getUint8(57) : undefined,
    tpSrc: has(TUN_TP_SRC) ? view.getUint16(58, true) : undefined,
    tpDst: has(TUN_TP_DST) ? view.getUint16(60, true) : undefined,
    dontFragment: has(TUN_DONT_FRAGMENT),
    csum: has(TUN_CSUM),
    oam: has(TUN_OAM),
    ipv4InfoBridge: has(TUN_IPV4_INFO_BRIDGE),
    geneveOptions: has(TUN_GENEVE_OPTS) ? optionBytes(64) : undefined,
    vxlanGbp: has(TUN_VXLAN_OPTS) ? view.getUint32(4, true) : undefined,
    erspanOptions: has(TUN_ERSPAN_OPTS) ? optionBytes(72) : undefined,
  };
}

/**
 * Builds PsampleMessage objects from one native batch and hands each to `deliver`.
 * Every object has the same keys in the same order (absent values are undefined), so V8 keeps
 * one hidden class for all of them; `data` and `userCookie` are views into the batch payload.
 */
export function readBatch(
  records: ArrayBuffer,
  payload: ArrayBuffer,
  count: number,
  deliver: (message: PsampleMessage) => void,
): void {
  const w = new Uint32Array(records);
  const q = new BigUint64Array(records);
  const i32 = new Int32Array(records);
  for (let i = 0; i < count; i++) {
    const r = i * WORDS;
    const present = w[r + PRESENT]!;
    const kindCmdFlags = w[r + KIND_CMD_FLAGS]!;
    const ifindexes = w[r + IFINDEXES]!;
    const outTcProto = w[r + OUT_TC_PROTO]!;
    const cookieLength = w[r + COOKIE_LENGTH]!;
    deliver({
      command: COMMANDS[(kindCmdFlags >>> 8) & 0xff] ?? 'sample',
      group: w[r + GROUP]!,
      groupSeq: w[r + GROUP_SEQ]!,
      iifindex: ifindexes & 0xffff,
      oifindex: present & ATTR_OIFINDEX ? ifindexes >>> 16 : undefined,
      origSize: w[r + ORIGSIZE]!,
      rate: w[r + RATE]!,
      probability: (kindCmdFlags & FLAG_PROBABILITY) !== 0,
      timestampNs: q[(r + TIMESTAMP) >>> 1]!,
      latencyNs: present & ATTR_LATENCY ? q[(r + LATENCY) >>> 1] : undefined,
      outTc: present & ATTR_OUT_TC ? outTcProto & 0xffff : undefined,
      outTcOcc: present & ATTR_OUT_TC_OCC ? q[(r + OUT_TC_OCC) >>> 1] : undefined,
      proto: outTcProto >>> 16,
      data: new Uint8Array(payload, w[r + DATA_OFFSET]!, w[r + DATA_LENGTH]!),
      userCookie: cookieLength > 0 ? new Uint8Array(payload, w[r + COOKIE_OFFSET]!, cookieLength) : undefined,
      groupRefcount: present & ATTR_GROUP_REFCOUNT ? w[r + GROUP_REFCOUNT] : undefined,
      tunnel: kindCmdFlags & FLAG_TUNNEL ? readTunnel(payload, w[r + TUNNEL_OFFSET]!) : undefined,
      nsid: kindCmdFlags & FLAG_NSID ? i32[r + NSID] : undefined,
    });
  }
}

import { CaptureFileError } from './errors';

/** One captured frame: the link type of its interface, its bytes, when it was captured. */
export interface CapturedFrame {
  /** The LINKTYPE_ value (tcpdump.org/linktypes.html). */
  readonly linkType: number;
  readonly data: Uint8Array;
  /** Milliseconds since the epoch. */
  readonly timeMs: number;
}

const PCAP_MICRO = 0xa1b2c3d4;
const PCAP_NANO = 0xa1b23c4d;
const PCAPNG_SECTION = 0x0a0d0d0a;
const PCAPNG_BYTE_ORDER = 0x1a2b3c4d;
const BLOCK_INTERFACE = 1;
const BLOCK_OBSOLETE_PACKET = 2;
const BLOCK_SIMPLE_PACKET = 3;
const BLOCK_ENHANCED_PACKET = 6;
const IF_TSRESOL = 9;

function* pcapFrames(view: DataView, littleEndian: boolean, nanoseconds: boolean): Generator<CapturedFrame> {
  if (view.byteLength < 24) throw new CaptureFileError('the pcap file header is cut short (24 bytes expected)');
  const linkType = view.getUint32(20, littleEndian) & 0x0fffffff;
  for (let at = 24; at < view.byteLength;) {
    if (view.byteLength - at < 16) throw new CaptureFileError(`the pcap record at byte ${at} is cut short`);
    const seconds = view.getUint32(at, littleEndian);
    const fraction = view.getUint32(at + 4, littleEndian);
    const captured = view.getUint32(at + 8, littleEndian);
    if (at + 16 + captured > view.byteLength)
      throw new CaptureFileError(`the pcap record at byte ${at} says ${captured} bytes, more than the file has`);
    yield {
      linkType,
      data: new Uint8Array(view.buffer, view.byteOffset + at + 16, captured),
      timeMs: seconds * 1000 + (nanoseconds ? fraction / 1e6 : fraction / 1e3),
    };
    at += 16 + captured;
  }
}

interface PcapngInterface {
  readonly linkType: number;
  /** Timestamp units per second. */
  readonly unitsPerSecond: number;
}

function interfaceBlock(view: DataView, start: number, end: number, le: boolean): PcapngInterface {
  const linkType = view.getUint16(start, le);
  let unitsPerSecond = 1e6;
  for (let at = start + 8; at + 4 <= end;) {
    const code = view.getUint16(at, le);
    const length = view.getUint16(at + 2, le);
    if (code === 0) break;
    if (code === IF_TSRESOL && length >= 1) {
      const resolution = view.getUint8(at + 4);
      unitsPerSecond = resolution & 0x80 ? 2 ** (resolution & 0x7f) : 10 ** resolution;
    }
    at += 4 + ((length + 3) & ~3);
  }
  return { linkType, unitsPerSecond };
}

function* pcapngFrames(view: DataView): Generator<CapturedFrame> {
  let le = true;
  let interfaces: PcapngInterface[] = [];
  for (let at = 0; at < view.byteLength;) {
    if (view.byteLength - at < 12) throw new CaptureFileError(`the pcapng block at byte ${at} is cut short`);
    const type = view.getUint32(at, le);
    if (type === PCAPNG_SECTION) {
      // Each section says its byte order, and starts its interfaces afresh.
      const magic = view.getUint32(at + 8, true);
      if (magic === PCAPNG_BYTE_ORDER) le = true;
      else if (magic === 0x4d3c2b1a) le = false;
      else throw new CaptureFileError(`the pcapng section at byte ${at} has no byte-order magic`);
      interfaces = [];
    }
    const length = view.getUint32(at + 4, le);
    if (length < 12 || length % 4 !== 0 || at + length > view.byteLength) {
      throw new CaptureFileError(`the pcapng block at byte ${at} has length ${length}: cut short or garbled`);
    }
    const body = at + 8;
    const end = at + length - 4;
    if (type === BLOCK_INTERFACE) {
      interfaces.push(interfaceBlock(view, body, end, le));
    } else if (type === BLOCK_ENHANCED_PACKET || type === BLOCK_OBSOLETE_PACKET) {
      const id = type === BLOCK_ENHANCED_PACKET ? view.getUint32(body, le) : view.getUint16(body, le);
      const iface = interfaces[id];
      if (iface === undefined)
        throw new CaptureFileError(`the packet block at byte ${at} names interface ${id}, which the section does not describe`);
      const units = view.getUint32(body + 4, le) * 2 ** 32 + view.getUint32(body + 8, le);
      const captured = view.getUint32(body + 12, le);
      if (body + 20 + captured > end)
        throw new CaptureFileError(`the packet block at byte ${at} says ${captured} bytes, more than it holds`);
      yield {
        linkType: iface.linkType,
        data: new Uint8Array(view.buffer, view.byteOffset + body + 20, captured),
        timeMs: (units / iface.unitsPerSecond) * 1000,
      };
    } else if (type === BLOCK_SIMPLE_PACKET) {
      const iface = interfaces[0];
      if (iface === undefined) throw new CaptureFileError(`the simple packet block at byte ${at} comes before any interface`);
      const captured = Math.min(view.getUint32(body, le), end - body - 4);
      yield { linkType: iface.linkType, data: new Uint8Array(view.buffer, view.byteOffset + body + 4, captured), timeMs: Number.NaN };
    }
    at += length;
  }
}

/**
 * The frames of a capture file as tcpdump, dumpcap or Wireshark write it: classic pcap (either
 * byte order, micro- or nanosecond timestamps) or pcapng (every section and interface). Throws
 * CaptureFileError for a file that is neither, or that is cut short inside a record.
 */
export function captureFrames(bytes: Uint8Array): Iterable<CapturedFrame> {
  if (bytes.byteLength < 4) throw new CaptureFileError('not a capture file: too short for a pcap or pcapng header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (magic === PCAP_MICRO || magic === PCAP_NANO) return pcapFrames(view, true, magic === PCAP_NANO);
  const swapped = view.getUint32(0, false);
  if (swapped === PCAP_MICRO || swapped === PCAP_NANO) return pcapFrames(view, false, swapped === PCAP_NANO);
  if (magic === PCAPNG_SECTION) return pcapngFrames(view);
  throw new CaptureFileError(
    'not a capture file: neither pcap nor pcapng (write one with tcpdump -w FILE udp port 4739, or dumpcap/Wireshark)',
  );
}

import { formatCookieHex } from '../ovn/cookie';
import { chainText, type NetworkEvent } from '../events/network-event';
import { firstSampleOf } from '../events/event-samples';

/** pcapng block types and option codes (draft-ietf-opsawg-pcapng). */
const SECTION_HEADER = 0x0a0d0d0a;
const INTERFACE_DESCRIPTION = 0x00000001;
const ENHANCED_PACKET = 0x00000006;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
const OPT_END = 0;
const OPT_COMMENT = 1;
const SHB_USERAPPL = 4;
const IF_NAME = 2;
const IF_DESCRIPTION = 3;
const IF_TSRESOL = 9;
/** Timestamps in nanoseconds: if_tsresol 9 (10^-9 s). */
const NANOSECONDS = 9;
const LINKTYPE_ETHERNET = 1;
const LINKTYPE_RAW = 101;

const encoder = new TextEncoder();

/** Options as pcapng lays them out: code, length, value padded to 32 bits; then opt_endofopt. */
function options(list: readonly (readonly [number, Uint8Array])[]): Uint8Array {
  let size = 4;
  for (const [, value] of list) size += 4 + ((value.length + 3) & ~3);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const [code, value] of list) {
    view.setUint16(offset, code, true);
    view.setUint16(offset + 2, value.length, true);
    out.set(value, offset + 4);
    offset += 4 + ((value.length + 3) & ~3);
  }
  view.setUint32(offset, OPT_END, true);
  return out;
}

/** A block: type, total length, body (padded to 32 bits), total length again. */
function block(type: number, body: Uint8Array): Uint8Array {
  const padded = (body.length + 3) & ~3;
  const out = new Uint8Array(12 + padded);
  const view = new DataView(out.buffer);
  view.setUint32(0, type, true);
  view.setUint32(4, out.length, true);
  out.set(body, 8);
  view.setUint32(8 + padded, out.length, true);
  return out;
}

/** The per-packet comment: verdict, chain and every cookie of the packet's samples. */
export function pcapngComment(event: NetworkEvent): string {
  const cookies = event.chain.filter((step) => step.cookie !== undefined).map((step) => formatCookieHex(step.cookie!));
  return `${event.verdict.toUpperCase()}: ${chainText(event)}${cookies.length === 0 ? '' : ` [cookie ${cookies.join(', ')}]`}`;
}

/**
 * Writes sampled packets as pcapng, which Wireshark and tshark open: one section, one interface
 * per (ingress ifindex, link type), described when the packet first uses it, each packet with
 * its kernel timestamp in nanoseconds, its original length and a comment with its verdict chain.
 */
export class PcapngWriter {
  private readonly interfaces = new Map<string, number>();

  constructor(
    private readonly write: (bytes: Uint8Array) => void,
    private readonly interfaceName: (ifindex: number) => string | undefined,
  ) {
    const body = new Uint8Array(16);
    const view = new DataView(body.buffer);
    view.setUint32(0, BYTE_ORDER_MAGIC, true);
    view.setUint16(4, 1, true);
    view.setUint16(6, 0, true);
    view.setBigInt64(8, -1n, true); // section length not given: a stream
    this.write(block(SECTION_HEADER, Buffer.concat([body, options([[SHB_USERAPPL, encoder.encode('ovn-psample')]])])));
  }

  /** Writes the packet of `event`; false, and nothing written, for a source without the packet's bytes. */
  packet(event: NetworkEvent): boolean {
    const sample = firstSampleOf(event);
    if (event.packet === undefined) return false;
    const linkType = event.fields.link === 'raw' ? LINKTYPE_RAW : LINKTYPE_ETHERNET;
    const id = this.interfaceId(event.iifindex, linkType);
    const data = sample.data;
    const head = new Uint8Array(20);
    const view = new DataView(head.buffer);
    view.setUint32(0, id, true);
    view.setUint32(4, Number(event.timestampNs >> 32n), true);
    view.setUint32(8, Number(event.timestampNs & 0xffffffffn), true);
    view.setUint32(12, data.length, true);
    view.setUint32(16, Math.max(sample.origSize, data.length), true);
    const paddedData = new Uint8Array((data.length + 3) & ~3);
    paddedData.set(data);
    this.write(block(ENHANCED_PACKET, Buffer.concat([head, paddedData, options([[OPT_COMMENT, encoder.encode(pcapngComment(event))]])])));
    return true;
  }

  private interfaceId(ifindex: number, linkType: number): number {
    const key = `${ifindex}/${linkType}`;
    let id = this.interfaces.get(key);
    if (id === undefined) {
      id = this.interfaces.size;
      this.interfaces.set(key, id);
      const head = new Uint8Array(8);
      const view = new DataView(head.buffer);
      view.setUint16(0, linkType, true);
      view.setUint32(4, 0, true); // no snap length: psample truncation is per sample
      const name = this.interfaceName(ifindex) ?? `if${ifindex}`;
      this.write(
        block(
          INTERFACE_DESCRIPTION,
          Buffer.concat([
            head,
            options([
              [IF_NAME, encoder.encode(name)],
              [IF_DESCRIPTION, encoder.encode(`ifindex ${ifindex}`)],
              [IF_TSRESOL, Uint8Array.of(NANOSECONDS)],
            ]),
          ]),
        ),
      );
    }
    return id;
  }
}

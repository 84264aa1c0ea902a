import type { DecodedPacket } from '../packet/types';
import type { PsampleMessage } from '../psample/types';

function fields(record: object, skip: readonly string[] = ['kind']): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (skip.includes(key) || value === undefined) continue;
    parts.push(
      `${key}=${Array.isArray(value) ? `[${value.map((v) => (typeof v === 'object' ? fields(v as object, []) : String(v))).join(',')}]` : typeof value === 'object' ? fields(value as object, []) : String(value)}`,
    );
  }
  return `{${parts.join(' ')}}`;
}

/**
 * Every decoded layer of a sampled packet, the way ovnkube-observ -print-full-packet shows one
 * (gopacket's Packet.String(): a "PACKET:" line, then "- Layer N = Name {Field=Value ...}").
 */
export function packetDump(packet: DecodedPacket | undefined, sample: PsampleMessage): string {
  const lines = [`PACKET: ${sample.data.length} bytes, wire length ${sample.origSize} cap length ${sample.data.length}`];
  if (packet === undefined) return `${lines[0]!}\n- no packet bytes: this source gives the packet's fields only`;
  let layer = 1;
  if (packet.ethernet !== undefined) lines.push(`- Layer ${layer++} = Ethernet\t${fields(packet.ethernet)}`);
  if (packet.network !== undefined) lines.push(`- Layer ${layer++} = ${packet.network.kind.toUpperCase()}\t${fields(packet.network)}`);
  if (packet.transport !== undefined)
    lines.push(`- Layer ${layer++} = ${packet.transport.kind.toUpperCase()}\t${fields(packet.transport)}`);
  if (packet.unknown !== undefined) lines.push(`- Layer ${layer} = Unknown\t${fields(packet.unknown)}`);
  if (packet.truncated) lines.push(`- truncated in ${packet.truncatedLayer ?? 'a header'}`);
  if (packet.malformed !== undefined) lines.push(`- malformed ${packet.malformed.layer}: ${packet.malformed.reason}`);
  return lines.join('\n');
}

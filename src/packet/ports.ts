import { readU16 } from './bytes.js';
import { roomLeft } from './problems.js';
import type { DecodedPacket, TransportPorts } from './types.js';

/** After a cut TCP/UDP/SCTP header: keeps the ports when the first 4 bytes made it. */
export function decodePortsOnly(
  packet: DecodedPacket,
  data: Uint8Array,
  offset: number,
  declaredEnd: number,
  protocol: TransportPorts['protocol'],
): void {
  if (roomLeft(data, offset, declaredEnd) < 4) return;
  packet.transport = {
    kind: 'ports',
    protocol,
    srcPort: readU16(data, offset),
    dstPort: readU16(data, offset + 2),
  };
}

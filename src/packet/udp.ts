import { readU16 } from './bytes.js';
import { decodePortsOnly } from './ports.js';
import { hasRoom } from './problems.js';
import type { DecodedPacket } from './types.js';

const UDP_HEADER_BYTES = 8;

export function decodeUdp(packet: DecodedPacket, data: Uint8Array, offset: number, declaredEnd: number): void {
  if (!hasRoom(packet, data, offset, UDP_HEADER_BYTES, declaredEnd, 'udp')) {
    decodePortsOnly(packet, data, offset, declaredEnd, 'udp');
    return;
  }
  packet.transport = {
    kind: 'udp',
    srcPort: readU16(data, offset),
    dstPort: readU16(data, offset + 2),
    length: readU16(data, offset + 4),
  };
}

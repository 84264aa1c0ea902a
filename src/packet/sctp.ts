import { readU16, readU32 } from './bytes.js';
import { decodePortsOnly } from './ports.js';
import { hasRoom } from './problems.js';
import type { DecodedPacket } from './types.js';

const SCTP_COMMON_HEADER_BYTES = 12;

export function decodeSctp(packet: DecodedPacket, data: Uint8Array, offset: number, declaredEnd: number): void {
  if (!hasRoom(packet, data, offset, SCTP_COMMON_HEADER_BYTES, declaredEnd, 'sctp')) {
    decodePortsOnly(packet, data, offset, declaredEnd, 'sctp');
    return;
  }
  packet.transport = {
    kind: 'sctp',
    srcPort: readU16(data, offset),
    dstPort: readU16(data, offset + 2),
    verificationTag: readU32(data, offset + 4),
  };
}

import { readU16, readU32 } from './bytes.js';
import { decodePortsOnly } from './ports.js';
import { hasRoom, markMalformed } from './problems.js';
import type { DecodedPacket, TcpFlag, TcpSegment } from './types.js';

const TCP_MIN_HEADER_BYTES = 20;
/** Bit i of the flags byte is FLAG_NAMES[i]. */
const FLAG_NAMES: readonly TcpFlag[] = ['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG', 'ECE', 'CWR'];

function tcpFlags(bits: number): TcpFlag[] {
  const flags: TcpFlag[] = [];
  for (let bit = 0; bit < 8; bit++) {
    if ((bits & (1 << bit)) !== 0) flags.push(FLAG_NAMES[bit] as TcpFlag);
  }
  return flags;
}

export function decodeTcp(packet: DecodedPacket, data: Uint8Array, offset: number, declaredEnd: number): void {
  if (!hasRoom(packet, data, offset, TCP_MIN_HEADER_BYTES, declaredEnd, 'tcp')) {
    decodePortsOnly(packet, data, offset, declaredEnd, 'tcp');
    return;
  }
  const tcp: TcpSegment = {
    kind: 'tcp',
    srcPort: readU16(data, offset),
    dstPort: readU16(data, offset + 2),
    seq: readU32(data, offset + 4),
    ack: readU32(data, offset + 8),
    dataOffset: (data[offset + 12] as number) >>> 4,
    flags: tcpFlags(data[offset + 13] as number),
    window: readU16(data, offset + 14),
  };
  packet.transport = tcp;
  const headerBytes = tcp.dataOffset * 4;
  if (headerBytes < TCP_MIN_HEADER_BYTES) {
    markMalformed(packet, 'tcp', `data offset ${headerBytes} is below the minimum 20 bytes`);
    return;
  }
  hasRoom(packet, data, offset, headerBytes, declaredEnd, 'tcp');
}

import { readU16 } from './bytes.js';
import { hasRoom, roomLeft } from './problems.js';
import type { DecodedPacket, IcmpMessage } from './types.js';

const ICMP_HEADER_BYTES = 8;
const ECHO_REPLY = 0;
const ECHO_REQUEST = 8;

const ICMP_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'echo-reply',
  3: 'destination-unreachable',
  4: 'source-quench',
  5: 'redirect',
  8: 'echo-request',
  9: 'router-advertisement',
  10: 'router-solicitation',
  11: 'time-exceeded',
  12: 'parameter-problem',
  13: 'timestamp-request',
  14: 'timestamp-reply',
};

export function decodeIcmp(packet: DecodedPacket, data: Uint8Array, offset: number, declaredEnd: number): void {
  const complete = hasRoom(packet, data, offset, ICMP_HEADER_BYTES, declaredEnd, 'icmp');
  if (!complete && roomLeft(data, offset, declaredEnd) < 2) return;
  const type = data[offset] as number;
  const icmp: IcmpMessage = { kind: 'icmp', type, code: data[offset + 1] as number };
  const name = ICMP_TYPE_NAMES[type];
  if (name !== undefined) icmp.name = name;
  if (complete && (type === ECHO_REQUEST || type === ECHO_REPLY)) {
    icmp.id = readU16(data, offset + 4);
    icmp.seq = readU16(data, offset + 6);
  }
  packet.transport = icmp;
}

import type { DecodedPacket } from '../packet/types';

const PROTOCOL_NAMES: Readonly<Record<number, string>> = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 58: 'ICMPv6', 132: 'SCTP' };

/** The packet's addresses without the endpoints' names: "TCP 10.0.0.1:40000 → 10.0.0.2:80", "ICMP a → b echo-request". */
export function packetTuple(packet: DecodedPacket): string {
  const network = packet.network;
  if (network === undefined) return `ethertype 0x${packet.etherType.toString(16).padStart(4, '0')}`;
  if (network.kind === 'arp') return `ARP ${network.senderIp ?? '?'} → ${network.targetIp ?? '?'}`;
  const transport = packet.transport;
  const name = PROTOCOL_NAMES[network.protocol] ?? `proto ${network.protocol}`;
  if (transport !== undefined && 'srcPort' in transport) {
    const [open, close] = network.kind === 'ipv6' ? ['[', ']'] : ['', ''];
    return `${name} ${open}${network.src}${close}:${transport.srcPort} → ${open}${network.dst}${close}:${transport.dstPort}`;
  }
  if (transport !== undefined && (transport.kind === 'icmp' || transport.kind === 'icmpv6')) {
    return `${name} ${network.src} → ${network.dst} ${transport.name ?? `type ${transport.type}`}`;
  }
  return `${name} ${network.src} → ${network.dst}`;
}

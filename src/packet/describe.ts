import { IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP } from './ip-protocol.js';
import type { ArpPacket, DecodedPacket, EthernetHeader, Ipv4Packet, Ipv6Packet, TransportLayer } from './types.js';

const ARP_REQUEST = 1;
const ARP_REPLY = 2;

const PROTOCOL_LABELS: Readonly<Record<number, string>> = {
  [IPPROTO_ICMP]: 'ICMP',
  [IPPROTO_TCP]: 'TCP',
  [IPPROTO_UDP]: 'UDP',
  [IPPROTO_ICMPV6]: 'ICMPv6',
  [IPPROTO_SCTP]: 'SCTP',
};

function protocolLabel(protocol: number): string {
  return PROTOCOL_LABELS[protocol] ?? `proto ${protocol}`;
}

function vlanPrefix(ethernet: EthernetHeader | undefined): string {
  if (ethernet === undefined || ethernet.vlans.length === 0) return '';
  return `vlan ${ethernet.vlans.map((tag) => tag.vid).join('.')} `;
}

function describeArp(arp: ArpPacket): string {
  if (arp.op === ARP_REQUEST && arp.targetIp !== undefined) return `ARP who-has ${arp.targetIp} tell ${arp.senderIp}`;
  if (arp.op === ARP_REPLY && arp.senderIp !== undefined) return `ARP ${arp.senderIp} is-at ${arp.senderMac}`;
  return `ARP op ${arp.op}`;
}

/** RFC 5952 section 6: an IPv6 address next to a port goes in brackets. */
function endpoint(ip: Ipv4Packet | Ipv6Packet, address: string, port: number): string {
  return ip.kind === 'ipv6' ? `[${address}]:${port}` : `${address}:${port}`;
}

function describeTransport(ip: Ipv4Packet | Ipv6Packet, transport: TransportLayer): string {
  switch (transport.kind) {
    case 'tcp':
    case 'udp':
    case 'sctp':
    case 'ports': {
      const flow = `${endpoint(ip, ip.src, transport.srcPort)} > ${endpoint(ip, ip.dst, transport.dstPort)}`;
      if (transport.kind === 'tcp') return `${flow} TCP [${transport.flags.join(',')}]`;
      if (transport.kind === 'sctp') return `${flow} SCTP vtag=0x${transport.verificationTag.toString(16)}`;
      return `${flow} ${transport.kind === 'udp' ? 'UDP' : transport.protocol.toUpperCase()}`;
    }
    case 'icmp':
    case 'icmpv6': {
      let text = `${ip.src} > ${ip.dst} ${transport.kind === 'icmp' ? 'ICMP' : 'ICMPv6'} `;
      text += transport.name ?? `type=${transport.type}`;
      if (transport.code !== 0 || transport.name === undefined) text += ` code=${transport.code}`;
      if (transport.id !== undefined) text += ` id=${transport.id} seq=${transport.seq}`;
      if (transport.kind === 'icmpv6' && transport.target !== undefined) text += ` target=${transport.target}`;
      return text;
    }
  }
}

function describeIp(packet: DecodedPacket, ip: Ipv4Packet | Ipv6Packet): string {
  if (packet.transport !== undefined) return describeTransport(ip, packet.transport);
  let text = `${ip.src} > ${ip.dst} ${protocolLabel(ip.protocol)}`;
  const fragmentOffset = ip.kind === 'ipv4' ? ip.fragmentOffset : (ip.fragment?.offset ?? 0);
  if (fragmentOffset !== 0) text += ` fragment offset=${fragmentOffset}`;
  return text;
}

function describeProblems(packet: DecodedPacket): string {
  let text = '';
  if (packet.truncated) text += ` truncated in ${packet.truncatedLayer}`;
  if (packet.malformed !== undefined) text += ` malformed ${packet.malformed.layer}: ${packet.malformed.reason}`;
  return text;
}

/** One short human line, tcpdump-like: `10.0.0.1:34567 > 10.0.0.2:80 TCP [SYN] len=74`. */
export function describePacket(packet: DecodedPacket): string {
  const network = packet.network;
  const prefix = vlanPrefix(packet.ethernet);
  if (network?.kind === 'arp') return prefix + describeArp(network) + describeProblems(packet);
  let text: string;
  if (network !== undefined) {
    text = describeIp(packet, network);
  } else if (packet.ethernet !== undefined) {
    text = `${packet.ethernet.src} > ${packet.ethernet.dst} ethertype 0x${packet.etherType.toString(16).padStart(4, '0')}`;
  } else {
    text = packet.link === 'raw' ? 'IP' : 'Ethernet';
  }
  return `${prefix}${text} len=${packet.length}${describeProblems(packet)}`;
}

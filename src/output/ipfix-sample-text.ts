import { splitObservationDomain, hex32 } from '../ovn/cookie';
import type { OvnSampleEvent } from '../ovn/event';
import type { IpfixPacketFields, IpfixSample } from '../ipfix/types';
import { eventTextBytes } from './sample-text';
import { escapeControl } from './control-text';

const TRANSPORT_NAMES: Readonly<Record<number, string>> = { 6: 'TCP', 17: 'UDP', 132: 'SCTP' };
const ICMP_NAMES: Readonly<Record<number, string>> = { 1: 'ICMP', 58: 'ICMPv6' };
const ETHERTYPE_ARP = 0x0806;

/**
 * What an IPFIX record says of its packet, in the form of describePacket()'s lines (as far as
 * the record's fields go: no flags, no length, no ARP addresses: there are no packet bytes):
 *
 *   [vlan V ]SRC:PORT > DST:PORT TCP|UDP|SCTP        ([IPv6]:PORT in brackets)
 *   [vlan V ]SRC > DST ICMP|ICMPv6 type=T code=C
 *   [vlan V ]SRC > DST proto N
 *   [vlan V ]MAC > MAC ARP | ethertype 0xHHHH
 */
export function ipfixPacketText(packet: IpfixPacketFields): string {
  const vlan = packet.vlanId === undefined ? '' : `vlan ${packet.vlanId} `;
  const { src, dst, protocol } = packet;
  if (src !== undefined && dst !== undefined && protocol !== undefined) {
    const transport = TRANSPORT_NAMES[protocol];
    if (transport !== undefined && packet.srcPort !== undefined && packet.dstPort !== undefined) {
      const [open, close] = src.includes(':') ? ['[', ']'] : ['', ''];
      return `${vlan}${open}${src}${close}:${packet.srcPort} > ${open}${dst}${close}:${packet.dstPort} ${transport}`;
    }
    const icmp = ICMP_NAMES[protocol];
    if (icmp !== undefined && packet.icmpType !== undefined)
      return `${vlan}${src} > ${dst} ${icmp} type=${packet.icmpType} code=${packet.icmpCode ?? 0}`;
    return `${vlan}${src} > ${dst} ${transport ?? icmp ?? `proto ${protocol}`}`;
  }
  const l2 = `${vlan}${packet.srcMac ?? '?'} > ${packet.dstMac ?? '?'}`;
  if (packet.etherType === ETHERTYPE_ARP) return `${l2} ARP`;
  return packet.etherType === undefined ? l2 : `${l2} ethertype 0x${packet.etherType.toString(16).padStart(4, '0')}`;
}

/**
 * The text line of an IPFIX record (`decode --ipfix --format text`):
 *
 *   exporter=ADDR:PORT[ in=NAME][ out=NAME] app=A dp=D point=P PACKET weight=W[ | SENTENCE]
 *
 * (`domain=HEX` instead of app/dp/point when the record has no observationPointId), the
 * sentence as `decode`'s psample lines write it.
 */
export function ipfixSampleText(sample: IpfixSample, event?: OvnSampleEvent): string {
  const { exporter, packet } = sample;
  const point = sample.observationPointId;
  const where = `exporter=${exporter.address.includes(':') ? `[${exporter.address}]` : exporter.address}:${exporter.port}`;
  const ports =
    (packet.ingressInterfaceName === undefined ? '' : ` in=${escapeControl(packet.ingressInterfaceName)}`) +
    (packet.egressInterfaceName === undefined ? '' : ` out=${escapeControl(packet.egressInterfaceName)}`);
  let cookie: string;
  if (point === undefined) cookie = `domain=${hex32(sample.observationDomainId)}`;
  else {
    const { appId, datapathKey } = splitObservationDomain(sample.observationDomainId);
    cookie = `app=${appId} dp=${datapathKey} point=${point}`;
  }
  const line = `${where}${ports} ${cookie} ${ipfixPacketText(packet)} weight=${sample.weight}`;
  return event === undefined ? line : line + eventTextBytes(event).toString();
}

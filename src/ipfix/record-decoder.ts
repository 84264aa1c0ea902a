import { addon } from '../native/binding';
import { TUNNEL_TYPES } from './information-elements';
import { VARIABLE_LENGTH } from './message';
import { Slot, type CompiledTemplate } from './template';
import type { IpfixPacketFields } from './types';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function mac(bytes: Uint8Array, at: number): string {
  return `${HEX[bytes[at]!]}:${HEX[bytes[at + 1]!]}:${HEX[bytes[at + 2]!]}:${HEX[bytes[at + 3]!]}:${HEX[bytes[at + 4]!]}:${HEX[bytes[at + 5]!]}`;
}

/** An unsigned integer of 1-8 bytes, big-endian (exact up to 2^53). */
function unsigned(bytes: Uint8Array, at: number, length: number): number {
  let value = 0;
  for (let i = 0; i < length; i++) value = value * 256 + bytes[at + i]!;
  return value;
}

function text(bytes: Buffer, at: number, length: number): string {
  let end = at + length;
  // Fixed-length names come NUL-padded from some exporters.
  while (end > at && bytes[end - 1] === 0) end--;
  return bytes.toString('utf8', at, end);
}

/** The fields of one data record, before the message's header is added (see IpfixSample). */
export interface RecordFields {
  observationPointId: number | undefined;
  /** packetDeltaCount, undefined without it. */
  packets: number | undefined;
  octets: number | undefined;
  /** flowStartDeltaMicroseconds: how long before the message's export time the sample was taken. */
  flowStartDeltaUs: number | undefined;
  packet: IpfixPacketFields;
  /** Options records of OVS's exporter statistics (template 462). */
  exportingProcessId: number | undefined;
  notSentPacketTotalCount: number | undefined;
}

/**
 * Decodes the record at `at` of a data set with its template. Returns where the next record
 * starts, or -1 when the record runs past `end` (a variable-length field longer than what is
 * left): the rest of the set cannot be read then.
 */
export function decodeRecord(template: CompiledTemplate, bytes: Buffer, at: number, end: number, out: RecordFields): number {
  const { lengths, slots } = template;
  const packet: Record<string, unknown> = {};
  let tunnel: Record<string, unknown> | undefined;
  // interfaceName (82) names the interface of the element before it: OVS's egress templates
  // carry ingressInterface, a name, egressInterface, a name.
  let egressName = false;
  out.observationPointId = undefined;
  out.packets = undefined;
  out.octets = undefined;
  out.flowStartDeltaUs = undefined;
  out.exportingProcessId = undefined;
  out.notSentPacketTotalCount = undefined;
  for (let i = 0; i < slots.length; i++) {
    let length = lengths[i]!;
    if (length === VARIABLE_LENGTH) {
      if (at >= end) return -1;
      length = bytes[at++]!;
      if (length === 255) {
        if (at + 2 > end) return -1;
        length = (bytes[at]! << 8) | bytes[at + 1]!;
        at += 2;
      }
    }
    if (at + length > end) return -1;
    switch (slots[i] as Slot) {
      case Slot.Skip:
        break;
      case Slot.Octets:
        out.octets = unsigned(bytes, at, length);
        break;
      case Slot.Packets:
        out.packets = unsigned(bytes, at, length);
        break;
      case Slot.FlowStartDelta:
        out.flowStartDeltaUs = unsigned(bytes, at, length);
        break;
      case Slot.ObservationPoint:
        out.observationPointId = unsigned(bytes, at, length);
        break;
      case Slot.ExportingProcess:
        out.exportingProcessId = unsigned(bytes, at, length);
        break;
      case Slot.NotSent:
        out.notSentPacketTotalCount = unsigned(bytes, at, length);
        break;
      case Slot.Direction: {
        const direction = unsigned(bytes, at, length);
        if (direction <= 1) packet.direction = direction === 0 ? 'ingress' : 'egress';
        break;
      }
      case Slot.SrcMac:
        packet.srcMac = mac(bytes, at);
        break;
      case Slot.DstMac:
        packet.dstMac = mac(bytes, at);
        break;
      case Slot.EtherType:
        packet.etherType = unsigned(bytes, at, length);
        break;
      case Slot.VlanId:
        packet.vlanId = unsigned(bytes, at, length) & 0xfff;
        break;
      case Slot.VlanPriority:
        packet.vlanPriority = unsigned(bytes, at, length);
        break;
      case Slot.IpVersion:
        packet.ipVersion = unsigned(bytes, at, length);
        break;
      case Slot.Ttl:
        packet.ttl = unsigned(bytes, at, length);
        break;
      case Slot.Protocol:
        packet.protocol = unsigned(bytes, at, length);
        break;
      case Slot.Dscp:
        packet.dscp = unsigned(bytes, at, length);
        break;
      case Slot.SrcIpv4:
        packet.src = addon.addressText(bytes, at, 4);
        break;
      case Slot.DstIpv4:
        packet.dst = addon.addressText(bytes, at, 4);
        break;
      case Slot.SrcIpv6:
        packet.src = addon.addressText(bytes, at, 16);
        break;
      case Slot.DstIpv6:
        packet.dst = addon.addressText(bytes, at, 16);
        break;
      case Slot.FlowLabel:
        packet.flowLabel = unsigned(bytes, at, length);
        break;
      case Slot.SrcPort:
        packet.srcPort = unsigned(bytes, at, length);
        break;
      case Slot.DstPort:
        packet.dstPort = unsigned(bytes, at, length);
        break;
      case Slot.IcmpType:
        packet.icmpType = unsigned(bytes, at, length);
        break;
      case Slot.IcmpCode:
        packet.icmpCode = unsigned(bytes, at, length);
        break;
      case Slot.IngressInterface:
        packet.ingressInterface = unsigned(bytes, at, length);
        egressName = false;
        break;
      case Slot.EgressInterface:
        packet.egressInterface = unsigned(bytes, at, length);
        egressName = true;
        break;
      case Slot.InterfaceName: {
        // OVS sends an empty name for a port it does not know (the egress port of a sample
        // action that comes before the output): no name.
        const name = text(bytes, at, length);
        if (name === '') break;
        if (egressName) packet.egressInterfaceName = name;
        else packet.ingressInterfaceName = name;
        break;
      }
      case Slot.TunnelType: {
        const type = unsigned(bytes, at, length);
        tunnel ??= {};
        tunnel.type = type;
        if (TUNNEL_TYPES[type] !== undefined) tunnel.typeName = TUNNEL_TYPES[type];
        break;
      }
      case Slot.TunnelKey:
        // A copy: the record must not keep the whole datagram alive.
        (tunnel ??= {}).key = new Uint8Array(bytes.subarray(at, at + length));
        break;
      case Slot.TunnelSrc:
        (tunnel ??= {}).src = addon.addressText(bytes, at, 4);
        break;
      case Slot.TunnelDst:
        (tunnel ??= {}).dst = addon.addressText(bytes, at, 4);
        break;
      case Slot.TunnelProtocol:
        (tunnel ??= {}).protocol = unsigned(bytes, at, length);
        break;
      case Slot.TunnelSrcPort:
        (tunnel ??= {}).srcPort = unsigned(bytes, at, length);
        break;
      case Slot.TunnelDstPort:
        (tunnel ??= {}).dstPort = unsigned(bytes, at, length);
        break;
    }
    at += length;
  }
  if (tunnel !== undefined) packet.tunnel = tunnel;
  out.packet = packet;
  return at;
}

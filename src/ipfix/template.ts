import { IE, VMWARE_IE, VMWARE_PEN } from './information-elements';
import { VARIABLE_LENGTH, type FieldSpecifier, type TemplateRecord } from './message';

/** What the record decoder does with a field: which property it fills (SKIP: none). */
export enum Slot {
  Skip,
  Octets,
  Packets,
  Protocol,
  SrcPort,
  SrcIpv4,
  IngressInterface,
  DstPort,
  DstIpv4,
  EgressInterface,
  SrcIpv6,
  DstIpv6,
  FlowLabel,
  SrcMac,
  VlanId,
  IpVersion,
  Direction,
  DstMac,
  InterfaceName,
  ObservationPoint,
  ExportingProcess,
  NotSent,
  IcmpType,
  IcmpCode,
  Ttl,
  Dscp,
  VlanPriority,
  EtherType,
  TunnelType,
  TunnelKey,
  TunnelSrc,
  TunnelDst,
  TunnelProtocol,
  TunnelSrcPort,
  TunnelDstPort,
  FlowStartDelta,
}

type SlotRule = readonly [Slot, 'uint' | number | 'variable'];

// Each element's slot and the length it must have to be read (unsigned integers may come in
// any reduced size, 1-8 bytes: RFC 7011 section 6.2); with another length it is skipped.
const IANA: ReadonlyMap<number, SlotRule> = new Map<number, SlotRule>([
  [IE.octetDeltaCount, [Slot.Octets, 'uint']],
  [IE.packetDeltaCount, [Slot.Packets, 'uint']],
  [IE.protocolIdentifier, [Slot.Protocol, 'uint']],
  [IE.sourceTransportPort, [Slot.SrcPort, 'uint']],
  [IE.sourceIPv4Address, [Slot.SrcIpv4, 4]],
  [IE.ingressInterface, [Slot.IngressInterface, 'uint']],
  [IE.destinationTransportPort, [Slot.DstPort, 'uint']],
  [IE.destinationIPv4Address, [Slot.DstIpv4, 4]],
  [IE.egressInterface, [Slot.EgressInterface, 'uint']],
  [IE.sourceIPv6Address, [Slot.SrcIpv6, 16]],
  [IE.destinationIPv6Address, [Slot.DstIpv6, 16]],
  [IE.flowLabelIPv6, [Slot.FlowLabel, 'uint']],
  [IE.sourceMacAddress, [Slot.SrcMac, 6]],
  [IE.vlanId, [Slot.VlanId, 'uint']],
  [IE.dot1qVlanId, [Slot.VlanId, 'uint']],
  [IE.dot1qPriority, [Slot.VlanPriority, 'uint']],
  [IE.ipVersion, [Slot.IpVersion, 'uint']],
  [IE.flowDirection, [Slot.Direction, 'uint']],
  [IE.destinationMacAddress, [Slot.DstMac, 6]],
  [IE.interfaceName, [Slot.InterfaceName, 'variable']],
  [IE.observationPointId, [Slot.ObservationPoint, 'uint']],
  [IE.exportingProcessId, [Slot.ExportingProcess, 'uint']],
  [IE.flowStartDeltaMicroseconds, [Slot.FlowStartDelta, 'uint']],
  [IE.notSentPacketTotalCount, [Slot.NotSent, 'uint']],
  [IE.icmpTypeIPv4, [Slot.IcmpType, 'uint']],
  [IE.icmpTypeIPv6, [Slot.IcmpType, 'uint']],
  [IE.icmpCodeIPv4, [Slot.IcmpCode, 'uint']],
  [IE.icmpCodeIPv6, [Slot.IcmpCode, 'uint']],
  [IE.ipTTL, [Slot.Ttl, 'uint']],
  [IE.ipDiffServCodePoint, [Slot.Dscp, 'uint']],
  [IE.ethernetType, [Slot.EtherType, 'uint']],
]);

const VMWARE: ReadonlyMap<number, SlotRule> = new Map<number, SlotRule>([
  [VMWARE_IE.tunnelType, [Slot.TunnelType, 'uint']],
  [VMWARE_IE.tunnelKey, [Slot.TunnelKey, 'variable']],
  [VMWARE_IE.tunnelSourceIPv4Address, [Slot.TunnelSrc, 4]],
  [VMWARE_IE.tunnelDestinationIPv4Address, [Slot.TunnelDst, 4]],
  [VMWARE_IE.tunnelProtocolIdentifier, [Slot.TunnelProtocol, 'uint']],
  [VMWARE_IE.tunnelSourceTransportPort, [Slot.TunnelSrcPort, 'uint']],
  [VMWARE_IE.tunnelDestinationTransportPort, [Slot.TunnelDstPort, 'uint']],
]);

function slotOf(field: FieldSpecifier): Slot {
  const rule = field.enterprise === 0 ? IANA.get(field.id) : field.enterprise === VMWARE_PEN ? VMWARE.get(field.id) : undefined;
  if (rule === undefined) return Slot.Skip;
  const [slot, length] = rule;
  if (length === 'variable') return slot;
  if (length === 'uint') return field.length >= 1 && field.length <= 8 ? slot : Slot.Skip;
  return field.length === length ? slot : Slot.Skip;
}

/** What a template's records are: packet samples, OVS's exporter statistics, or options this collector does not read. */
export type TemplateKind = 'flow' | 'exporter-stats' | 'options';

/** A template ready to decode records: each field's length and slot, in record order. */
export interface CompiledTemplate {
  readonly templateId: number;
  readonly kind: TemplateKind;
  readonly lengths: Uint16Array;
  readonly slots: Uint8Array;
  /** The fewest bytes a record takes (a variable-length field takes at least its 1-byte length). */
  readonly minRecordBytes: number;
  readonly record: TemplateRecord;
}

export function compileTemplate(record: TemplateRecord): CompiledTemplate {
  const lengths = Uint16Array.from(record.fields, (field) => field.length);
  const slots = Uint8Array.from(record.fields, slotOf);
  let minRecordBytes = 0;
  for (const length of lengths) minRecordBytes += length === VARIABLE_LENGTH ? 1 : length;
  let kind: TemplateKind = 'flow';
  if (record.options) kind = slots.includes(Slot.NotSent) && slots.includes(Slot.ExportingProcess) ? 'exporter-stats' : 'options';
  return { templateId: record.templateId, kind, lengths, slots, minRecordBytes, record };
}

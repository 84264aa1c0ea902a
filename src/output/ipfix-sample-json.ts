import { splitObservationDomain } from '../ovn/cookie';
import type { OvnSampleEvent } from '../ovn/event';
import type { IpfixSample } from '../ipfix/types';
import { toHex } from './hex';
import { sharedJson } from './shared-json';

/**
 * The JSON line of an IPFIX record (`decode --ipfix --format json`), members in this order,
 * absent ones left out: source ("ipfix"), exporter ("ADDRESS:PORT"), exportTime, flowStartUs,
 * sequenceNumber, templateId, templateDomainId, obsDomainId, obsPointId, ovn {appId,
 * datapathKey} (with a point id: an OVS sample action's cookie), weight, octets, packet (the
 * record's fields: IpfixPacketFields, the tunnel key as hex), event (the OVN decoder's).
 * There are no packet bytes in IPFIX, so no `data`.
 */
export function ipfixSampleJson(sample: IpfixSample, event?: OvnSampleEvent): string {
  const point = sample.observationPointId;
  const { tunnel, ...fields } = sample.packet;
  const packet =
    tunnel === undefined ? fields : { ...fields, tunnel: { ...tunnel, ...(tunnel.key === undefined ? {} : { key: toHex(tunnel.key) }) } };
  const line = JSON.stringify({
    source: sample.source,
    exporter: `${sample.exporter.address.includes(':') ? `[${sample.exporter.address}]` : sample.exporter.address}:${sample.exporter.port}`,
    exportTime: sample.exportTime,
    flowStartUs: sample.flowStartUs,
    sequenceNumber: sample.sequenceNumber,
    templateId: sample.templateId,
    templateDomainId: sample.templateDomainId,
    obsDomainId: sample.observationDomainId,
    obsPointId: point,
    ovn: point === undefined ? undefined : splitObservationDomain(sample.observationDomainId),
    weight: sample.weight,
    octets: sample.octets,
    packet,
  });
  return event === undefined ? line : `${line.slice(0, -1)},"event":${sharedJson(event)}}`;
}

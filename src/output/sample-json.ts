import { splitObservationDomain, observationIdsFromCookie } from '../ovn/cookie';
import { decodePacket } from '../packet/decode';
import type { PsampleMessage, PsampleTunnel } from '../psample/types';
import { toHex } from './hex';

function tunnelJson(t: PsampleTunnel): Record<string, unknown> {
  return {
    ...t,
    id: t.id?.toString(),
    geneveOptions: t.geneveOptions && toHex(t.geneveOptions),
    erspanOptions: t.erspanOptions && toHex(t.erspanOptions),
  };
}

/**
 * The JSON form of one message: bigints as decimal strings (they exceed 2^53), bytes as
 * lowercase hex, plus what the cookie and the packet say when they can be read.
 */
export function sampleJson(message: PsampleMessage): Record<string, unknown> {
  const ids = message.userCookie && observationIdsFromCookie(message.userCookie);
  return {
    command: message.command,
    group: message.group,
    groupSeq: message.groupSeq,
    iifindex: message.iifindex,
    oifindex: message.oifindex,
    origSize: message.origSize,
    rate: message.rate,
    probability: message.probability,
    timestampNs: message.timestampNs.toString(),
    latencyNs: message.latencyNs?.toString(),
    outTc: message.outTc,
    outTcOcc: message.outTcOcc?.toString(),
    proto: message.proto,
    data: toHex(message.data),
    userCookie: message.userCookie && toHex(message.userCookie),
    groupRefcount: message.groupRefcount,
    tunnel: message.tunnel && tunnelJson(message.tunnel),
    nsid: message.nsid,
    obsDomainId: ids?.obsDomainId,
    obsPointId: ids?.obsPointId,
    ovn: ids && splitObservationDomain(ids.obsDomainId),
    packet: message.command === 'sample' ? decodePacket(message.data, message.proto) : undefined,
  };
}

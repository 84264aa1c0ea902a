import { splitObservationDomain, observationIdsFromCookie } from '../ovn/cookie';
import { decodePacket } from '../packet/decode';
import { describePacket } from '../packet/describe';
import type { PsampleMessage } from '../psample/types';
import { toHex } from './hex';
import { RepeatedPacket } from './repeated-packet';

// The packet's description: the same for the samples of one packet at several stages.
const repeated = new RepeatedPacket((data, proto) => describePacket(decodePacket(data, proto)));

/** One human line per message: where it was sampled, the cookie, and the packet. */
export function sampleText(message: PsampleMessage): string {
  if (message.command !== 'sample') {
    return `${message.command} group=${message.group} refcount=${message.groupRefcount ?? '?'}`;
  }
  const parts = [`group=${message.group}`];
  if (message.nsid !== undefined) parts.push(`nsid=${message.nsid}`);
  parts.push(`in=${message.iifindex}`);
  if (message.oifindex !== undefined) parts.push(`out=${message.oifindex}`);
  const ids = message.userCookie && observationIdsFromCookie(message.userCookie);
  if (ids) {
    const { appId, datapathKey } = splitObservationDomain(ids.obsDomainId);
    parts.push(`app=${appId} dp=${datapathKey} point=${ids.obsPointId}`);
  } else if (message.userCookie) {
    parts.push(`cookie=${toHex(message.userCookie)}`);
  }
  parts.push(repeated.of(message.data, message.proto));
  return parts.join(' ');
}

import { OVN_COOKIE_BYTES, readCookieId } from '../ovn/cookie';
import type { OvnSampleEvent } from '../ovn/event';
import { decodePacket } from '../packet/decode';
import type { PsampleMessage, PsampleTunnel } from '../psample/types';
import { toHex } from './hex';
import { member, numberMember } from './json-text';
import { sharedJson } from './shared-json';
import { packetJson } from './packet-json';
import { RepeatedPacket } from './repeated-packet';

function tunnelJson(t: PsampleTunnel): string {
  return JSON.stringify({
    ...t,
    id: t.id?.toString(),
    geneveOptions: t.geneveOptions && toHex(t.geneveOptions),
    erspanOptions: t.erspanOptions && toHex(t.erspanOptions),
  });
}

// The packet's bytes as hex and its decoded headers as JSON: the same for the samples of one
// packet at several stages.
const repeated = new RepeatedPacket((data, proto) => ({ hex: toHex(data), packet: packetJson(decodePacket(data, proto)) }));

function bigintMember(name: string, value: bigint | undefined): string {
  return value === undefined ? '' : `,"${name}":"${value}"`;
}

/**
 * The JSON form of one message, as one line of text written field by field: bigints as decimal
 * strings (they exceed 2^53), bytes as lowercase hex, plus what the cookie (obsDomainId,
 * obsPointId, ovn: {appId, datapathKey}) and the packet say when they can be read, and the OVN
 * decoder's `event` when given. Members that are absent are left out, as JSON.stringify does.
 */
export function sampleJson(message: PsampleMessage, event?: OvnSampleEvent): string {
  const cookie = message.userCookie;
  const command = message.command;
  let ids = '';
  if (cookie !== undefined && cookie.byteLength === OVN_COOKIE_BYTES) {
    const domain = readCookieId(cookie, 0);
    ids = `,"obsDomainId":${domain},"obsPointId":${readCookieId(cookie, 4)},"ovn":{"appId":${domain >>> 24},"datapathKey":${domain & 0xffffff}}`;
  }
  const tunnel = message.tunnel;
  const { hex, packet } = repeated.of(message.data, message.proto);
  return (
    `{"command":"${command}","group":${message.group},"groupSeq":${message.groupSeq},"iifindex":${message.iifindex}` +
    numberMember('oifindex', message.oifindex) +
    `,"origSize":${message.origSize},"rate":${message.rate},"probability":${message.probability}` +
    `,"timestampNs":"${message.timestampNs}"` +
    bigintMember('latencyNs', message.latencyNs) +
    numberMember('outTc', message.outTc) +
    bigintMember('outTcOcc', message.outTcOcc) +
    `,"proto":${message.proto},"data":"${hex}"` +
    member('userCookie', cookie === undefined ? undefined : `"${toHex(cookie)}"`) +
    numberMember('groupRefcount', message.groupRefcount) +
    member('tunnel', tunnel === undefined ? undefined : tunnelJson(tunnel)) +
    numberMember('nsid', message.nsid) +
    ids +
    member('packet', command === 'sample' ? packet : undefined) +
    member('event', event === undefined ? undefined : sharedJson(event)) +
    '}'
  );
}

import { OVN_COOKIE_BYTES, readCookieId } from '../ovn/cookie';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleMessage, PsampleTunnel } from '../psample/types';
import { toHex } from './hex';
import { member, numberMember } from './json-text';
import { sharedJson } from './shared-json';
import { packetJsonText } from './packet-json';
import { RepeatedPacket } from './repeated-packet';

function tunnelJson(t: PsampleTunnel): string {
  return JSON.stringify({
    ...t,
    id: t.id?.toString(),
    geneveOptions: t.geneveOptions && toHex(t.geneveOptions),
    erspanOptions: t.erspanOptions && toHex(t.erspanOptions),
  });
}

/**
 * What a line says of a packet's bytes: the same for the samples of one packet at several
 * stages. `hexBytes` and `packetMemberBytes` are the pieces as bytes, encoded for the byte writer
 * the first time it copies them.
 */
export interface PacketPieces {
  readonly hex: string;
  /** `,"packet":{…}`. */
  readonly packetMember: string;
  hexBytes?: Buffer;
  packetMemberBytes?: Buffer;
}

const repeated = new RepeatedPacket<PacketPieces>((data, proto) => ({
  hex: toHex(data),
  packetMember: member('packet', packetJsonText(data, proto)),
}));

/** The pieces of the packet's part of a line, shared with the previous sample's when it is the same packet. */
export function packetPieces(message: PsampleMessage): PacketPieces {
  return repeated.of(message.data, message.proto);
}

function bigintMember(name: string, value: bigint | undefined): string {
  return value === undefined ? '' : `,"${name}":"${value}"`;
}

/** The line up to the packet's hex, which follows: `{"command":…,"data":"`. ASCII only. */
export function sampleJsonHead(message: PsampleMessage): string {
  return (
    `{"command":"${message.command}","group":${message.group},"groupSeq":${message.groupSeq},"iifindex":${message.iifindex}` +
    numberMember('oifindex', message.oifindex) +
    `,"origSize":${message.origSize},"rate":${message.rate},"probability":${message.probability}` +
    `,"timestampNs":"${message.timestampNs}"` +
    bigintMember('latencyNs', message.latencyNs) +
    numberMember('outTc', message.outTc) +
    bigintMember('outTcOcc', message.outTcOcc) +
    `,"proto":${message.proto},"data":"`
  );
}

/** From the end of the hex to the packet member: the cookie, tunnel, nsid and the OVN ids. ASCII only. */
export function sampleJsonMiddle(message: PsampleMessage): string {
  const cookie = message.userCookie;
  let ids = '';
  if (cookie !== undefined && cookie.byteLength === OVN_COOKIE_BYTES) {
    const domain = readCookieId(cookie, 0);
    ids = `,"obsDomainId":${domain},"obsPointId":${readCookieId(cookie, 4)},"ovn":{"appId":${domain >>> 24},"datapathKey":${domain & 0xffffff}}`;
  }
  const tunnel = message.tunnel;
  return (
    '"' +
    member('userCookie', cookie === undefined ? undefined : `"${toHex(cookie)}"`) +
    numberMember('groupRefcount', message.groupRefcount) +
    // Addresses, numbers, booleans and hex: JSON.stringify writes them in ASCII.
    member('tunnel', tunnel === undefined ? undefined : tunnelJson(tunnel)) +
    numberMember('nsid', message.nsid) +
    ids
  );
}

/**
 * The JSON form of one message, as one line of text written field by field: bigints as decimal
 * strings (they exceed 2^53), bytes as lowercase hex, plus what the cookie (obsDomainId,
 * obsPointId, ovn: {appId, datapathKey}) and the packet say when they can be read, and the OVN
 * decoder's `event` when given. Members that are absent are left out, as JSON.stringify does.
 * SampleJsonWriter writes the same lines as bytes.
 */
export function sampleJson(message: PsampleMessage, event?: OvnSampleEvent): string {
  const { hex, packetMember } = packetPieces(message);
  return (
    sampleJsonHead(message) +
    hex +
    sampleJsonMiddle(message) +
    (message.command === 'sample' ? packetMember : '') +
    member('event', event === undefined ? undefined : sharedJson(event)) +
    '}'
  );
}

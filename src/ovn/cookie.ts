import { OvnCookieError } from '../errors';

/** The 8-byte user cookie OVS attaches to a psample sample: two big-endian u32. */
export interface ObservationIds {
  readonly obsDomainId: number;
  readonly obsPointId: number;
}

export const OVN_COOKIE_BYTES = 8;

/** ovn-northd puts the sampling application id in the top 8 bits and the datapath key below. */
export interface ObservationDomain {
  readonly appId: number;
  readonly datapathKey: number;
}

export function splitObservationDomain(obsDomainId: number): ObservationDomain {
  return { appId: obsDomainId >>> 24, datapathKey: obsDomainId & 0xffffff };
}

/** The big-endian u32 at `offset` of a cookie (obs_domain_id at 0, obs_point_id at 4), read without allocating. */
export function readCookieId(cookie: Uint8Array, offset: number): number {
  return ((cookie[offset]! << 24) | (cookie[offset + 1]! << 16) | (cookie[offset + 2]! << 8) | cookie[offset + 3]!) >>> 0;
}

/** The observation ids in a psample user cookie, or undefined when it is not 8 bytes long. */
export function observationIdsFromCookie(cookie: Uint8Array): ObservationIds | undefined {
  if (cookie.byteLength !== OVN_COOKIE_BYTES) {
    return undefined;
  }
  return { obsDomainId: readCookieId(cookie, 0), obsPointId: readCookieId(cookie, 4) };
}

/** A u32 as 8 hex digits, the way cookies and UUID prefixes are written. */
export function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/** The observation point id ovn-controller gives a drop sample of a logical flow: its UUID's first 32 bits. */
export function flowPointId(flowUuid: string): number {
  return Number.parseInt(flowUuid.slice(0, 8), 16) >>> 0;
}

/** ovn-northd's stage-hint: the first 32 bits of a northbound row's UUID, as 8 hex digits (hex32 of the same bits). */
export function stageHintOf(uuid: string): string {
  return uuid.slice(0, 8).toLowerCase();
}

/** The cookie as 16 hex digits, the form parseCookieHex() reads back. */
export function formatCookieHex(ids: ObservationIds): string {
  return hex32(ids.obsDomainId) + hex32(ids.obsPointId);
}

/** Parses a cookie typed by a user: 16 hex digits, optionally with 0x and ':', '-', '.' or spaces between bytes. */
export function parseCookieHex(text: string): ObservationIds {
  const digits = text
    .trim()
    .replace(/^0x/i, '')
    .replace(/[\s:.-]/g, '');
  if (!/^[0-9a-f]{16}$/i.test(digits)) {
    throw new OvnCookieError(
      `"${text}" is not an OVN sample cookie: give 8 bytes as 16 hex digits, obs_domain_id then obs_point_id, e.g. 2b000001000003ea.`,
    );
  }
  return {
    obsDomainId: Number.parseInt(digits.slice(0, 8), 16),
    obsPointId: Number.parseInt(digits.slice(8), 16),
  };
}

import { describe, expect, it } from 'vitest';
import { OvnCookieError } from '../../src/errors';
import { observationIdsFromCookie, parseCookieHex, splitObservationDomain } from '../../src/ovn/cookie';

describe('OVN sample cookies', () => {
  it('reads the lab-measured cookie 2a000001 000003e9 as acl-new app 42, datapath 1, point 1001', () => {
    const ids = observationIdsFromCookie(Uint8Array.from([0x2a, 0, 0, 1, 0, 0, 0x03, 0xe9]));
    expect(ids).toEqual({ obsDomainId: 0x2a000001, obsPointId: 1001 });
    expect(splitObservationDomain(ids!.obsDomainId)).toEqual({ appId: 42, datapathKey: 1 });
  });

  it('keeps the full unsigned range of both ids', () => {
    const ids = observationIdsFromCookie(new Uint8Array(8).fill(0xff));
    expect(ids).toEqual({ obsDomainId: 0xffffffff, obsPointId: 0xffffffff });
    expect(splitObservationDomain(0xffffffff)).toEqual({ appId: 255, datapathKey: 0xffffff });
  });

  it('reads a cookie that is a view into a larger buffer', () => {
    const buffer = Uint8Array.from([9, 9, 0x2b, 0, 0, 3, 0, 0, 3, 0xf4, 9]);
    expect(observationIdsFromCookie(buffer.subarray(2, 10))).toEqual({ obsDomainId: 0x2b000003, obsPointId: 1012 });
  });

  it('rejects cookies that are not 8 bytes (tc act_sample cookies are up to 16)', () => {
    expect(observationIdsFromCookie(new Uint8Array(16))).toBeUndefined();
    expect(observationIdsFromCookie(new Uint8Array(0))).toBeUndefined();
  });

  it('parses user-typed hex in the usual spellings', () => {
    for (const text of ['2b000001000003ea', '0x2B000001000003EA', '2b:00:00:01:00:00:03:ea', ' 2b000001 000003ea ']) {
      expect(parseCookieHex(text)).toEqual({ obsDomainId: 0x2b000001, obsPointId: 0x3ea });
    }
  });

  it('refuses malformed hex with a typed error that shows the expected form', () => {
    for (const text of ['', '2b00', '2b000001000003ea00', 'zz000001000003ea']) {
      expect(() => parseCookieHex(text)).toThrow(OvnCookieError);
    }
    try {
      parseCookieHex('xyz');
    } catch (error) {
      expect((error as OvnCookieError).code).toBe('OVN_COOKIE');
      expect((error as Error).message).toMatch(/16 hex digits/);
    }
  });
});

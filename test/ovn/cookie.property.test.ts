import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OvnCookieError } from '../../src/errors';
import {
  flowPointId,
  formatCookieHex,
  hex32,
  observationIdsFromCookie,
  parseCookieHex,
  splitObservationDomain,
  stageHintOf,
} from '../../src/ovn/cookie';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const ids = fc.record({ obsDomainId: u32, obsPointId: u32 });

describe('OVN cookie helpers (property-based)', () => {
  it('parseCookieHex reads back formatCookieHex, in any case and with the separators users type', () => {
    fc.assert(
      fc.property(ids, fc.constantFrom('', ':', '-', '.', ' '), fc.boolean(), fc.boolean(), (value, separator, prefixed, upper) => {
        const hex = formatCookieHex(value);
        expect(hex).toMatch(/^[0-9a-f]{16}$/);
        const bytes = hex.match(/../g)!.join(separator);
        const typed = `${prefixed ? '0x' : ''}${upper ? bytes.toUpperCase() : bytes}`;
        expect(parseCookieHex(typed)).toEqual(value);
      }),
    );
  });

  it('parseCookieHex returns ids or throws OvnCookieError, on any input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.stringMatching(/^(0x)?[0-9a-fA-F:.\- ]{0,24}$/)), (text) => {
        try {
          const parsed = parseCookieHex(text);
          expect(Number.isInteger(parsed.obsDomainId) && parsed.obsDomainId >= 0 && parsed.obsDomainId <= 0xffffffff).toBe(true);
          expect(Number.isInteger(parsed.obsPointId) && parsed.obsPointId >= 0 && parsed.obsPointId <= 0xffffffff).toBe(true);
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(OvnCookieError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('observationIdsFromCookie reads 8 bytes big-endian, wherever they sit in their buffer, and nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), fc.nat({ max: 8 }), (bytes, offset) => {
        const view = new Uint8Array(offset + bytes.length);
        view.set(bytes, offset);
        const cookie = view.subarray(offset);
        const parsed = observationIdsFromCookie(cookie);
        if (bytes.length !== 8) {
          expect(parsed).toBeUndefined();
          return;
        }
        expect(Buffer.from(formatCookieHex(parsed!), 'hex')).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('splitObservationDomain puts app id and datapath key back together, and never throws', () => {
    fc.assert(
      fc.property(u32, (domain) => {
        const { appId, datapathKey } = splitObservationDomain(domain);
        expect(appId).toBeLessThan(256);
        expect(datapathKey).toBeLessThan(1 << 24);
        expect(((appId << 24) | datapathKey) >>> 0).toBe(domain);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer()), (anything) => {
        const { appId, datapathKey } = splitObservationDomain(anything);
        expect(Number.isInteger(appId) && Number.isInteger(datapathKey)).toBe(true);
      }),
    );
  });

  it('a flow point id, a stage-hint and hex32 agree on the first 32 bits of a UUID', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        expect(hex32(flowPointId(uuid))).toBe(stageHintOf(uuid));
        expect(stageHintOf(uuid.toUpperCase())).toBe(stageHintOf(uuid));
      }),
    );
  });
});

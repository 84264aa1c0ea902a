import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import type { PsampleMessage } from '../../src/index';

export const fixtureDir = path.join(__dirname, '..', 'fixtures', 'psample');

export interface Vector {
  name: string;
  bytes: Uint8Array;
  expected: {
    nlmsgLen: number;
    familyId: number;
    cmd: number;
    version: number;
    attrs: Record<string, unknown>;
  };
}

/** The real kernel captures (see test/fixtures/psample/README.md). */
export function vectors(): Vector[] {
  return readdirSync(fixtureDir)
    .filter((f) => f.endsWith('.hex'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.hex$/, '');
      return {
        name,
        bytes: Uint8Array.from(Buffer.from(readFileSync(path.join(fixtureDir, file), 'utf8').trim(), 'hex')),
        expected: JSON.parse(readFileSync(path.join(fixtureDir, `${name}.json`), 'utf8')),
      };
    });
}

/** A sample with every attribute psample has, the nested tunnel included, each with a value of its own. */
export const everyAttributeSample: PsampleMessage = {
  command: 'sample',
  group: 77,
  groupSeq: 123456,
  iifindex: 4,
  oifindex: 9,
  origSize: 1500,
  rate: 1000,
  probability: false,
  timestampNs: 18_446_744_073_709_551_615n,
  latencyNs: 4242n,
  outTc: 3,
  outTcOcc: 9_007_199_254_740_993n,
  proto: 0x86dd,
  data: Uint8Array.from({ length: 64 }, (_, i) => i),
  userCookie: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
  groupRefcount: undefined,
  tunnel: {
    id: 0x0102030405060708n,
    ipv4Src: '192.0.2.1',
    ipv4Dst: '198.51.100.2',
    ipv6Src: '2001:db8::1',
    ipv6Dst: 'fe80::a:b:c',
    tos: 0x28,
    ttl: 64,
    tpSrc: 49152,
    tpDst: 6081,
    dontFragment: true,
    csum: true,
    oam: false,
    ipv4InfoBridge: true,
    geneveOptions: Uint8Array.from([0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef]),
    vxlanGbp: 0x800100,
    erspanOptions: Uint8Array.from([0, 0, 0, 2, 0, 0, 0, 7]),
  },
  nsid: undefined,
};

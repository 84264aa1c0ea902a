import { describe, expect, it } from 'vitest';

import { decodePsample, encodePsample, type PsampleMessage } from '../../src/index';
import { ABI_SOURCE, RECORD, RECORD_BYTES, RECORD_FLAGS } from '../../src/native/abi.generated';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { RecordBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { vectors } from '../support/fixtures';

// The batch records carry their numbers in the byte order the addon declares (the host's). The
// reader is run here on records rewritten in the other order, as an addon on a host of the
// other endianness (s390x, where OVN-Kubernetes also runs) writes them, using only the layout's
// own field table to rewrite them.
interface Field {
  name: string;
  offset: number;
  width: number;
  kind: 'number' | 'bytes';
}
const abi = JSON.parse(ABI_SOURCE) as { record: Field[]; tunnelBlock: Field[] };

function swapNumbers(bytes: Uint8Array, at: number, fields: readonly Field[]): void {
  for (const f of fields) if (f.kind === 'number') bytes.subarray(at + f.offset, at + f.offset + f.width).reverse();
}

/** The same batch with every number in the other byte order; the packet bytes untouched. */
function inOtherOrder(records: ArrayBuffer, payload: ArrayBuffer, count: number): [ArrayBuffer, ArrayBuffer] {
  const original = new DataView(records);
  const swappedRecords = new Uint8Array(records.slice(0));
  const swappedPayload = new Uint8Array(payload.slice(0));
  for (let i = 0; i < count; i++) {
    const at = i * RECORD_BYTES;
    if (original.getUint32(at + RECORD.kindCmdFlags, NATIVE_LITTLE_ENDIAN) & RECORD_FLAGS.tunnel) {
      swapNumbers(swappedPayload, original.getUint32(at + RECORD.tunnelOffset, NATIVE_LITTLE_ENDIAN), abi.tunnelBlock);
    }
    swapNumbers(swappedRecords, at, abi.record);
  }
  return [swappedRecords.buffer, swappedPayload.buffer];
}

const everyField: PsampleMessage = {
  command: 'sample',
  group: 0x01020304,
  groupSeq: 0xa0b0c0d0,
  iifindex: 0x0102,
  oifindex: 0x0304,
  origSize: 1500,
  rate: 0xfffffffe,
  probability: true,
  timestampNs: 0x0102030405060708n,
  latencyNs: 0x1112131415161718n,
  outTc: 0x0a0b,
  outTcOcc: 0x2122232425262728n,
  proto: 0x86dd,
  data: Uint8Array.from({ length: 37 }, (_, i) => i),
  userCookie: Uint8Array.from([0x2b, 0, 0, 3, 0, 0, 3, 0xf4]),
  groupRefcount: undefined,
  tunnel: {
    id: 0x0102030405060708n,
    ipv4Src: '192.0.2.1',
    ipv4Dst: '198.51.100.2',
    ipv6Src: '2001:db8::1',
    ipv6Dst: 'fe80::a:b:c',
    tos: 0x28,
    ttl: 64,
    tpSrc: 0xc001,
    tpDst: 6081,
    dontFragment: true,
    csum: false,
    oam: true,
    ipv4InfoBridge: false,
    geneveOptions: Uint8Array.from([0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef]),
    vxlanGbp: 0x00800100,
    erspanOptions: Uint8Array.from([0, 0, 0, 2, 0, 0, 0, 7]),
  },
  nsid: undefined,
};

function nativeBatch(datagram: Uint8Array): [ArrayBuffer, ArrayBuffer, number] {
  return addon.decode(datagram, 0, statValues());
}

describe('batch records in the other byte order', () => {
  const datagram = Buffer.concat([
    ...vectors().map((v) => v.bytes),
    encodePsample(everyField),
    encodePsample({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 }),
  ]);
  const [records, payload, count] = nativeBatch(datagram);
  const [swappedRecords, swappedPayload] = inOtherOrder(records, payload, count);

  it('are read back to the same messages when the reader is told their order', () => {
    const expected = decodePsample(datagram);
    expect(count).toBe(expected.length);
    expect(new RecordBatch(swappedRecords, swappedPayload, count, !NATIVE_LITTLE_ENDIAN).messages()).toEqual(expected);
    expect(expected.at(-2)).toEqual(everyField);
    expect(expected.at(-1)).toMatchObject({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 });
  });

  it('are misread in the host order: the order is what the reader must follow', () => {
    expect(new Uint8Array(swappedRecords)).not.toEqual(new Uint8Array(records));
    const misread = new RecordBatch(swappedRecords, swappedPayload, 1, NATIVE_LITTLE_ENDIAN);
    expect(() => misread.messages()).toThrow(RangeError); // payload offsets turn into nonsense
  });
});

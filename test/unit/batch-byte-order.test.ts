import { describe, expect, it } from 'vitest';

import { decodePsample, encodePsample } from '../../src/index';
import { ABI_SOURCE, RECORD, RECORD_BYTES, RECORD_FLAGS } from '../../src/native/abi.generated';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { RecordBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { everyAttributeSample, vectors } from '../support/fixtures';

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

function nativeBatch(datagram: Uint8Array): [ArrayBuffer, ArrayBuffer, number] {
  return addon.decode(datagram, 0, statValues());
}

describe('batch records in the other byte order', () => {
  const datagram = Buffer.concat([
    ...vectors().map((v) => v.bytes),
    encodePsample(everyAttributeSample),
    encodePsample({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 }),
  ]);
  const [records, payload, count] = nativeBatch(datagram);
  const [swappedRecords, swappedPayload] = inOtherOrder(records, payload, count);

  it('are read back to the same messages when the reader is told their order', () => {
    const expected = decodePsample(datagram);
    expect(count).toBe(expected.length);
    expect(new RecordBatch(swappedRecords, swappedPayload, count, !NATIVE_LITTLE_ENDIAN).messages()).toEqual(expected);
    expect(expected.at(-2)).toEqual(everyAttributeSample);
    expect(expected.at(-1)).toMatchObject({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 });
  });

  it('are misread in the host order: the order is what the reader must follow', () => {
    expect(new Uint8Array(swappedRecords)).not.toEqual(new Uint8Array(records));
    const misread = new RecordBatch(swappedRecords, swappedPayload, 1, NATIVE_LITTLE_ENDIAN);
    expect(() => misread.messages()).toThrow(RangeError); // payload offsets turn into nonsense
  });
});

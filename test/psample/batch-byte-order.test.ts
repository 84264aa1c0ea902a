import { describe, expect, it } from 'vitest';

import { decodePsample, encodePsample } from '../../src/index';
import { ABI_SOURCE, RECORD, RECORD_FLAGS } from '../../src/native/abi.generated';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { sampleJson } from '../../src/output/sample-json';
import { SampleLines } from '../../src/output/sample-lines';
import { PsampleBatch } from '../../src/psample/batch';
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
function inOtherOrder(buffer: ArrayBuffer, count: number): ArrayBuffer {
  const original = new DataView(buffer);
  const swapped = new Uint8Array(buffer.slice(0));
  for (let i = 0, at = 0; i < count; i++, at += original.getUint32(at + RECORD.length, NATIVE_LITTLE_ENDIAN)) {
    if (original.getUint32(at + RECORD.kindCmdFlags, NATIVE_LITTLE_ENDIAN) & RECORD_FLAGS.tunnel) {
      swapNumbers(swapped, at + original.getUint32(at + RECORD.tunnelOffset, NATIVE_LITTLE_ENDIAN), abi.tunnelBlock);
    }
    swapNumbers(swapped, at, abi.record);
  }
  return swapped.buffer;
}

function nativeBatch(datagram: Uint8Array): [ArrayBuffer, number] {
  return addon.decode(datagram, 0, statValues());
}

describe('batch records in the other byte order', () => {
  const datagram = Buffer.concat([
    ...vectors().map((v) => v.bytes),
    encodePsample(everyAttributeSample),
    encodePsample({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 }),
  ]);
  const [buffer, count] = nativeBatch(datagram);
  const swapped = inOtherOrder(buffer, count);

  it('are read back to the same messages when the reader is told their order', () => {
    const expected = decodePsample(datagram);
    expect(count).toBe(expected.length);
    expect(Array.from(new PsampleBatch(swapped, count, !NATIVE_LITTLE_ENDIAN), (s) => s.toObject())).toEqual(expected);
    expect(expected.at(-2)).toEqual(everyAttributeSample);
    expect(expected.at(-1)).toMatchObject({ command: 'new-group', group: 0x0a0b0c0d, groupRefcount: 0x01020304 });
  });

  it('render to the same JSON lines, one by one and as a batch, when the renderer is told their order', () => {
    const host = new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
    const other = new PsampleBatch(swapped, count, !NATIVE_LITTLE_ENDIAN);
    expect(Array.from(other, (s) => sampleJson(s))).toEqual(Array.from(host, (s) => sampleJson(s)));
    expect(new SampleLines('json').write(other).bytes.toString()).toBe(new SampleLines('json').write(host).bytes.toString());
  });

  it('are misread in the host order: the order is what the reader must follow', () => {
    expect(new Uint8Array(swapped)).not.toEqual(new Uint8Array(buffer));
    const misread = new PsampleBatch(swapped, count, NATIVE_LITTLE_ENDIAN);
    expect(() => Array.from(misread, (s) => s.toObject())).toThrow(RangeError); // lengths and offsets turn into nonsense
    expect(() => new SampleLines('json').write(misread)).toThrow(RangeError);
  });
});

import { inspect } from 'node:util';

import { describe, expect, it } from 'vitest';

import { decodePsample, encodePsample, type PsampleMessage } from '../../src/index';
import { RECORD } from '../../src/native/abi.generated';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { PsampleBatch } from '../../src/psample/batch';
import type { PsampleSample } from '../../src/psample/sample';
import { statValues } from '../../src/psample/stats';
import { everyAttributeSample, vectors } from '../support/fixtures';

// Samples read their fields from the batch buffer the reader thread filled, on access. These run
// the addon's own batch writer (the offline decoder shares it with the reader thread).
const datagram = Buffer.concat([
  ...vectors().map((v) => v.bytes),
  encodePsample(everyAttributeSample),
  encodePsample({ command: 'del-group', group: 3, groupRefcount: 0 }),
]);

function batchOf(bytes: Uint8Array): { batch: PsampleBatch; buffer: ArrayBuffer } {
  const [buffer, count] = addon.decode(bytes, 0, statValues());
  return { batch: new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN), buffer };
}

const FIELDS = Object.keys(everyAttributeSample) as (keyof PsampleMessage)[];

function fieldsOf(sample: PsampleSample): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((name) => [name, sample[name]]));
}

describe('PsampleSample', () => {
  const { batch, buffer } = batchOf(datagram);
  const plain = decodePsample(datagram);

  it('reads every field on access to what the plain decoder returns, for real captures, every attribute and a group event', () => {
    expect(batch.length).toBe(plain.length);
    expect([...batch].map(fieldsOf)).toEqual(plain);
    expect(fieldsOf(batch.at(-2)!)).toEqual(everyAttributeSample);
  });

  it('makes data and userCookie once, as views of the batch, and the tunnel once', () => {
    const sample = batch.at(-2)!;
    expect(sample.data).toBe(sample.data);
    expect(sample.userCookie).toBe(sample.userCookie);
    expect(sample.tunnel).toBe(sample.tunnel);
    expect(sample.data.buffer).toBe(buffer);
    expect(sample.userCookie!.buffer).toBe(buffer);
    expect(batch.at(-1)!.userCookie).toBeUndefined();
    expect(batch.at(-1)!.tunnel).toBeUndefined();
  });

  it('slice() holds only its own bytes and reads the same', () => {
    const { batch: fresh, buffer: freshBuffer } = batchOf(datagram);
    const sample = fresh.at(-2)!;
    const own = sample.slice();
    expect(own.data.buffer).not.toBe(freshBuffer);
    const length = new DataView(freshBuffer).getUint32(offsetOf(fresh, fresh.length - 2) + RECORD.length, NATIVE_LITTLE_ENDIAN);
    expect(own.data.buffer.byteLength).toBe(length);
    expect(length).toBeLessThan(freshBuffer.byteLength);
    expect(fieldsOf(own)).toEqual(fieldsOf(sample));
    new Uint8Array(freshBuffer).fill(0); // the batch's memory overwritten: the slice does not care
    expect(fieldsOf(own)).toEqual(everyAttributeSample);
  });

  it('toObject() is a plain object with its own bytes; inspect shows the fields', () => {
    const { batch: fresh, buffer: freshBuffer } = batchOf(datagram);
    const sample = fresh.at(-2)!;
    const object = sample.toObject();
    expect(Object.keys(object)).toEqual(FIELDS);
    expect(object.data.buffer).not.toBe(freshBuffer);
    expect(object).toEqual(everyAttributeSample);
    expect({ ...sample }).toEqual({}); // accessors live on the prototype: spread the plain form
    expect(inspect(sample)).toMatch(/^PsampleSample \{\n? *command: 'sample',/);
  });

  it('batch.at() and iteration agree; out-of-range indexes give undefined', () => {
    expect(Array.from({ length: batch.length }, (_, i) => fieldsOf(batch.at(i)!))).toEqual([...batch].map(fieldsOf));
    expect(batch.at(batch.length)).toBeUndefined();
    expect(batch.at(-batch.length - 1)).toBeUndefined();
    expect(batch.at(1.5)).toBeUndefined();
  });
});

function offsetOf(batch: PsampleBatch, index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) at = batch.nextOffset(at);
  return at;
}

import { PACKET_FIELD_WORDS, PACKET_FIELDS, PACKET_FLAGS, RECORD, RECORD_BYTES } from '../native/abi.generated';
import { addon } from '../native/binding';
import { PacketFieldsView } from '../packet/fields';
import { PsampleSample } from './sample';

/**
 * One hand-off of the reader thread: `length` messages (samples and group events) back to back
 * in one buffer (native/wire/batch_layout.h), their numbers in the byte order the addon declares (the
 * host's; a test can hand it the other one). Samples are made when they are read.
 */
export class PsampleBatch implements Iterable<PsampleSample> {
  /** Messages in the batch. */
  readonly length: number;
  readonly #view: DataView;
  readonly #le: boolean;
  #offsets: Uint32Array | undefined;
  #bytes: Uint8Array | undefined;
  #packetWords: Uint32Array | undefined;
  #packetTexts = '';

  /** @internal */
  constructor(buffer: ArrayBuffer, length: number, littleEndian: boolean) {
    this.#view = new DataView(buffer);
    this.#le = littleEndian;
    this.length = length;
  }

  /** The message at `index` (negative counts from the end), as Array.prototype.at(). */
  at(index: number): PsampleSample | undefined {
    const i = index < 0 ? this.length + index : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.length) return undefined;
    this.#offsets ??= this.#index();
    return new PsampleSample(this.#view, this.#offsets[i]!, this.#le);
  }

  *[Symbol.iterator](): Iterator<PsampleSample> {
    for (let i = 0, at = 0; i < this.length; i++, at = this.nextOffset(at)) yield this.sampleAt(at);
  }

  /**
   * Frees the batch's bytes now rather than at a later garbage collection: for a `batch` listener
   * that copies what it keeps and owns the socket (no iterator, `sample` or `group` listener reads
   * the batch after it). Its samples, and any sample read from it before, cannot be read afterwards.
   */
  release(): void {
    addon.detachBuffer(this.buffer);
  }

  /** @internal The bytes of the records. */
  get buffer(): ArrayBuffer {
    return this.#view.buffer as ArrayBuffer;
  }

  /** @internal The byte order of the records' numbers. */
  get littleEndian(): boolean {
    return this.#le;
  }

  /** @internal The records as numbers. */
  get view(): DataView {
    return this.#view;
  }

  /** @internal The records as bytes. */
  get bytes(): Uint8Array {
    return (this.#bytes ??= new Uint8Array(this.#view.buffer));
  }

  /**
   * @internal The packet of the sample at `index` (its record at byte `at`), decoded: every
   * sample's packet of the batch is decoded in one native call, when the first is asked for.
   */
  packetFieldsAt(index: number, at: number): PacketFieldsView {
    const words = this.#decodedPackets();
    const view = this.#view;
    return new PacketFieldsView(
      words,
      index,
      this.#packetTexts,
      view.buffer as ArrayBuffer,
      at + view.getUint32(at + RECORD.dataOffset, this.#le),
      view.getUint32(at + RECORD.dataLength, this.#le),
    );
  }

  /** @internal FNV-1a of the bytes of the sample at `index`: the samples of one packet carry the same. */
  packetHash(index: number): number {
    return this.#decodedPackets()[index * PACKET_FIELD_WORDS + PACKET_FIELDS.hash]!;
  }

  /** @internal Whether the sample at `index` carries the same bytes (and PROTO) as the batch's previous sample. */
  packetRepeats(index: number): boolean {
    return (this.#decodedPackets()[index * PACKET_FIELD_WORDS + PACKET_FIELDS.flags]! & PACKET_FLAGS.repeat) !== 0;
  }

  #decodedPackets(): Uint32Array {
    if (this.#packetWords === undefined) {
      const words = new Uint32Array(this.length * PACKET_FIELD_WORDS);
      this.#packetTexts = addon.packetFields(this.buffer, this.length, this.#le, words);
      this.#packetWords = words;
    }
    return this.#packetWords;
  }

  /** @internal The message whose record starts at byte `at`. */
  sampleAt(at: number): PsampleSample {
    return new PsampleSample(this.#view, at, this.#le);
  }

  /** @internal Where the record after the one at `at` starts. */
  nextOffset(at: number): number {
    const length = this.#view.getUint32(at + RECORD.length, this.#le);
    // A length that does not move forward by a whole record can only come from a corrupt batch.
    if (length < RECORD_BYTES) throw new RangeError(`batch record at ${at} has length ${length}`);
    return at + length;
  }

  #index(): Uint32Array {
    const offsets = new Uint32Array(this.length);
    for (let i = 0, at = 0; i < this.length; i++, at = this.nextOffset(at)) offsets[i] = at;
    return offsets;
  }
}

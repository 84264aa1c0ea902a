import { addon, type NativeLineRenderer } from '../native/binding';
import { observationIdsFromCookie } from '../ovn/cookie';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleBatch } from '../psample/batch';
import type { PsampleSample } from '../psample/sample';
import type { PsampleMessage } from '../psample/types';
import { sampleJson } from './sample-json';
import { eventTextBytes, sampleText } from './sample-text';
import { sharedJsonBytes } from './shared-json';

const { stop: STOP, flag: FLAG, state: STATE } = addon.LineRenderer;

/** The line formats the addon renders: sampleJson()'s and sampleText()'s lines. */
export type LineFormat = 'json' | 'text';

/** One sample's line, one native call (`decode`); with an OVN event, its sentence (text, after ` | `) or the whole event (JSON, as `event`). */
export function formatSample(message: PsampleSample, format: LineFormat, event?: OvnSampleEvent): string {
  return format === 'text' ? sampleText(message, event) : sampleJson(message, event);
}

/** Room allocated at a time; the lines of many batches share it, as Node's Buffer pool does. */
const CHUNK_BYTES = 256 * 1024;
/** Past this many events the table starts over: a stream of made-up cookies must not grow it without end. */
const MAX_EVENTS = 65_536;

/** What the batch writer needs of the OVN decoder (OvnSampleDecoder has it). */
export interface SampleEventSource {
  decodeSample(message: PsampleMessage): OvnSampleEvent;
  /** Whether decodeSample() answers `event` for every sample with its cookie until the next 'change'. */
  holds(event: OvnSampleEvent): boolean;
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

/**
 * Writes the lines of whole batches in one format (sampleJson()'s or sampleText()'s, each followed
 * by '\n') as UTF-8 bytes, rendered natively (native/render/sample_lines.h) in one call per batch. With
 * an event source, each line carries the sample's event: the renderer keeps each cookie's event as
 * the format writes it (the JSON object, or the text's ` | message`), and stops only at a cookie
 * it has not met since the databases last changed, which is decoded here once.
 */
export class SampleLines {
  readonly #renderer: NativeLineRenderer;
  readonly #eventBytes: (event: OvnSampleEvent) => Buffer;
  readonly #state = new Float64Array(STATE.length);
  readonly #events: SampleEventSource | undefined;
  #buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the lines not handed out yet would start. */
  #end = 0;
  #eventCount = 0;
  /** The decoder's answers changed since the events were set. */
  #stale = false;
  readonly #forget = (): void => {
    this.#stale = true;
  };

  constructor(format: LineFormat, events?: SampleEventSource) {
    this.#renderer = new addon.LineRenderer(format);
    this.#eventBytes = format === 'json' ? sharedJsonBytes : eventTextBytes;
    this.#events = events;
    events?.on('change', this.#forget);
  }

  /**
   * Every line handed out so far is written and referenced by no one (the caller's sink said so):
   * the next ones are written over them, so one chunk serves a stream of batches instead of a new
   * one, with fresh pages for the kernel to fault in and zero, every few batches.
   */
  recycle(): void {
    this.#end = 0;
  }

  /** Stops following the event source. */
  close(): void {
    this.#events?.off('change', this.#forget);
  }

  /**
   * The lines of the batch's samples (group events are left out), at most `maxLines` of them. The
   * bytes stay the caller's: later lines are written after them or into a new chunk, never over
   * them (a stream may keep them queued).
   */
  write(batch: PsampleBatch, maxLines = Infinity): { bytes: Buffer; lines: number } {
    const renderer = this.#renderer;
    const state = this.#state;
    const events = this.#events;
    if (this.#stale) this.#clearEvents();
    const flags = (batch.littleEndian ? FLAG.littleEndian : 0) | FLAG.samplesOnly | (events === undefined ? 0 : FLAG.withEvents);
    let start = this.#end;
    let index = 0;
    let offset = 0;
    let lines = 0;
    // Events the decoder gives for this moment only: good for the rest of this batch, not later.
    let passing = false;
    for (;;) {
      const stop = renderer.render(batch.buffer, batch.length, index, offset, flags, maxLines - lines, this.#buffer, this.#end, state);
      index = state[STATE.nextIndex]!;
      offset = state[STATE.nextOffset]!;
      lines += state[STATE.lines]!;
      this.#end = state[STATE.outEnd]!;
      if (stop === STOP.end || stop === STOP.lineLimit) break;
      if (stop === STOP.missingEvent) {
        passing = !this.#learn(batch.sampleAt(offset), events!) || passing;
      } else if (stop === STOP.noRoom) {
        start = this.#makeRoom(start, state[STATE.needed]!);
      } else {
        throw new RangeError(`batch record ${index} at ${offset} reaches outside its batch of ${batch.buffer.byteLength} bytes`);
      }
    }
    if (passing) this.#clearEvents();
    return { bytes: this.#buffer.subarray(start, this.#end), lines };
  }

  /** Sets the event of the sample's cookie; false when the decoder does not keep it beyond now. */
  #learn(sample: PsampleSample, events: SampleEventSource): boolean {
    if (this.#eventCount >= MAX_EVENTS) this.#clearEvents();
    const event = events.decodeSample(sample);
    const bytes = this.#eventBytes(event);
    const cookie = sample.userCookie;
    const ids = cookie && observationIdsFromCookie(cookie);
    if (ids !== undefined) this.#renderer.setEvent(ids.obsDomainId, ids.obsPointId, bytes);
    else this.#renderer.setEventForCookieLength(cookie?.byteLength ?? 0, bytes);
    this.#eventCount++;
    return events.holds(event);
  }

  #clearEvents(): void {
    this.#renderer.clearEvents();
    this.#eventCount = 0;
    this.#stale = false;
  }

  /** Moves the lines of this batch written so far (from `start`) to a chunk with room for `needed` more; returns where they start. */
  #makeRoom(start: number, needed: number): number {
    const pending = this.#buffer.subarray(start, this.#end);
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * (pending.length + needed)));
    next.set(pending);
    this.#buffer = next;
    this.#end = pending.length;
    return 0;
  }
}

import { addon } from '../native/binding';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleSample } from '../psample/sample';

const renderer = new addon.LineRenderer('text');
const suffixes = new WeakMap<OvnSampleEvent, Buffer>();

// A sentence is made of names from the OVN databases, which anyone who can write them chooses: a
// line break in one would forge a line of its own, an escape sequence would drive the terminal.
// A tab stays (a readable separator); the other control characters are written as escapes.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/g;
const escapeControl = (c: string): string =>
  c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/**
 * What the text line says of the OVN decoder's event: ` | ` and its sentence, after its status
 * when it is not 'decoded', its control characters but tabs escaped. In UTF-8, once per event (the
 * decoder hands out one per cookie).
 */
export function eventTextBytes(event: OvnSampleEvent): Buffer {
  let bytes = suffixes.get(event);
  if (bytes === undefined) {
    const sentence = event.status === 'decoded' ? event.message : `${event.status}: ${event.message}`;
    bytes = Buffer.from(` | ${sentence.replace(CONTROL, escapeControl)}`);
    suffixes.set(event, bytes);
  }
  return bytes;
}

/**
 * The human line of one message, rendered natively from its batch record (native/sample_text.h,
 * the one implementation, which says what a line holds): where it was sampled, the cookie
 * (app/dp/point of an OVS cookie, else its hex), the packet's description (describePacket()), and
 * the OVN decoder's event when given. SampleLines writes the same lines for whole batches.
 */
export function sampleText(sample: PsampleSample, event?: OvnSampleEvent): string {
  const { buffer, at, littleEndian } = sample.record();
  return renderer.line(buffer, at, littleEndian, event === undefined ? undefined : eventTextBytes(event));
}

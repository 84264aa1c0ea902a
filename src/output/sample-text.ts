import { addon } from '../native/binding';
import { escapeControl } from './control-text';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleSample } from '../psample/sample';

const renderer = new addon.LineRenderer('text');
const suffixes = new WeakMap<OvnSampleEvent, Buffer>();

/**
 * What the text line says of the OVN decoder's event: ` | ` and its sentence, after its status
 * when it is not 'decoded', its control characters but tabs escaped. In UTF-8, once per event (the
 * decoder hands out one per cookie).
 */
export function eventTextBytes(event: OvnSampleEvent): Buffer {
  let bytes = suffixes.get(event);
  if (bytes === undefined) {
    const sentence = event.status === 'decoded' ? event.message : `${event.status}: ${event.message}`;
    bytes = Buffer.from(` | ${escapeControl(sentence)}`);
    suffixes.set(event, bytes);
  }
  return bytes;
}

/**
 * The human line of one message, rendered natively from its batch record (native/render/sample_text.h,
 * the one implementation, which says what a line holds): where it was sampled, the cookie
 * (app/dp/point of an OVS cookie, else its hex), the packet's description (describePacket()), and
 * the OVN decoder's event when given. SampleLines writes the same lines for whole batches.
 */
export function sampleText(sample: PsampleSample, event?: OvnSampleEvent): string {
  const { buffer, at, littleEndian } = sample.record();
  return renderer.line(buffer, at, littleEndian, event === undefined ? undefined : eventTextBytes(event));
}

import { addon } from '../native/binding';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleSample } from '../psample/sample';
import { sharedJsonBytes } from './shared-json';

const renderer = new addon.LineRenderer('json');

/**
 * The JSON form of one message, as one line, rendered natively from its batch record
 * (native/render/sample_json.h, the one implementation, which says what a line holds): bigints as
 * decimal strings (they exceed 2^53), bytes as lowercase hex, what the cookie (obsDomainId,
 * obsPointId, ovn: {appId, datapathKey}) and the packet say, and the OVN decoder's `event` when
 * given; absent members are left out, as JSON.stringify does. SampleLines writes the same
 * lines for whole batches.
 */
export function sampleJson(sample: PsampleSample, event?: OvnSampleEvent): string {
  const { buffer, at, littleEndian } = sample.record();
  return renderer.line(buffer, at, littleEndian, event === undefined ? undefined : sharedJsonBytes(event));
}

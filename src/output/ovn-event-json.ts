import type { OvnSampleEvent } from '../ovn/event';

// The decoder hands out one frozen event per cookie until the databases change (OvnSampleResolver),
// so the samples of one ACL share an event and its JSON is written once.
const written = new WeakMap<OvnSampleEvent, string>();

/** JSON.stringify(event), once per event object. */
export function ovnEventJson(event: OvnSampleEvent): string {
  let json = written.get(event);
  if (json === undefined) {
    json = JSON.stringify(event);
    written.set(event, json);
  }
  return json;
}

// What the library hands out as immutable and shares between samples and packets (the decoder's
// events, one per cookie; the pod directory's endpoints; the datapath infos) is written as JSON
// once per object.
const written = new WeakMap<object, string>();
const encoded = new WeakMap<object, Buffer>();

/** JSON.stringify(value), once per object: only for the immutable, shared objects above. */
export function sharedJson(value: object): string {
  let json = written.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    written.set(value, json);
  }
  return json;
}

/** sharedJson(value) in UTF-8, once per object: for writers that copy bytes. */
export function sharedJsonBytes(value: object): Buffer {
  let bytes = encoded.get(value);
  if (bytes === undefined) {
    bytes = Buffer.from(sharedJson(value));
    encoded.set(value, bytes);
  }
  return bytes;
}

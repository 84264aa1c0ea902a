const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
// Below this, a table lookup per byte beats making a Buffer view for Node's native encoder.
const NATIVE_HEX_BYTES = 24;

export function toHex(bytes: Uint8Array): string {
  if (bytes.byteLength >= NATIVE_HEX_BYTES) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  let out = '';
  for (let i = 0; i < bytes.byteLength; i++) out += HEX[bytes[i]!]!;
  return out;
}

/** Whitespace and an optional 0x prefix are ignored; anything else that is not hex is an error. */
export function parseHex(text: string): Uint8Array | undefined {
  const digits = text.replace(/^\s*0x/i, '').replace(/\s+/g, '');
  if (digits.length === 0 || digits.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(digits)) return undefined;
  return Uint8Array.from(Buffer.from(digits, 'hex'));
}

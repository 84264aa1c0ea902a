import { InvalidOptionError } from './errors';

export function ipv4Bytes(text: string): Uint8Array {
  const parts = text.split('.');
  const bytes = parts.map(Number);
  if (parts.length !== 4 || bytes.some((b, i) => !/^\d{1,3}$/.test(parts[i]!) || b > 255)) {
    throw new InvalidOptionError(`"${text}" is not an IPv4 address`);
  }
  return Uint8Array.from(bytes);
}

export function ipv6Bytes(text: string): Uint8Array {
  const halves = text.split('::');
  const groups = (part: string | undefined): number[] =>
    part ? part.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN)) : [];
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  const all = halves.length === 2 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : head;
  if (halves.length > 2 || all.length !== 8 || missing < 0 || all.some(Number.isNaN)) {
    throw new InvalidOptionError(`"${text}" is not an IPv6 address`);
  }
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

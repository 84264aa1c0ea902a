import { isIP } from 'node:net';

/** An address block: IPv4 as a 32-bit number, IPv6 as a 128-bit bigint. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
  readonly text: string;
}

function ipv4Value(address: string): bigint {
  let value = 0n;
  for (const part of address.split('.')) value = (value << 8n) | BigInt(Number(part));
  return value;
}

function ipv6Value(address: string): bigint {
  let text = address;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const v4 = ipv4Value(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  return value;
}

/** The numeric value of an IP address string, or undefined when it is not one. */
export function ipValue(address: string): { family: 4 | 6; value: bigint } | undefined {
  const family = isIP(address);
  if (family === 4) return { family, value: ipv4Value(address) };
  if (family === 6) return { family, value: ipv6Value(address) };
  return undefined;
}

/** "10.0.0.0/8", "fd00::/64", or a bare address (a /32 or /128); undefined when it is neither. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const ip = ipValue(address);
  if (ip === undefined) return undefined;
  const bits = ip.family === 4 ? 32 : 128;
  const prefix = slash < 0 ? bits : Number(text.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits || (slash >= 0 && text.slice(slash + 1).trim() === '')) return undefined;
  const mask = ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return { family: ip.family, network: ip.value & mask, prefix, text };
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const ip = ipValue(address);
  if (ip === undefined || ip.family !== cidr.family) return false;
  const bits = cidr.family === 4 ? 32 : 128;
  return ip.value >> BigInt(bits - cidr.prefix) === cidr.network >> BigInt(bits - cidr.prefix);
}

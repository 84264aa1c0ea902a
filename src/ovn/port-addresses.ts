import { isIP } from 'node:net';

/**
 * The IP addresses in a Logical_Switch_Port's `addresses` entries ("MAC IP [IP...]"), with
 * "dynamic" entries read from `dynamic_addresses`; "router", "unknown" and MAC-only entries name
 * no address. IPs may carry a prefix length ("10.0.0.5/24").
 */
export function portIps(addresses: readonly string[], dynamicAddresses: string | undefined): string[] {
  const ips: string[] = [];
  for (const entry of addresses) {
    const words = (entry === 'dynamic' ? (dynamicAddresses ?? '') : entry).split(/\s+/);
    for (const word of words.slice(1)) {
      const slash = word.indexOf('/');
      const ip = slash < 0 ? word : word.slice(0, slash);
      if (isIP(ip) !== 0) ips.push(ip);
    }
  }
  return ips;
}

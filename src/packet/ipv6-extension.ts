import {
  IPPROTO_AH,
  IPPROTO_DSTOPTS,
  IPPROTO_FRAGMENT,
  IPPROTO_HOPOPTS,
  IPPROTO_ROUTING,
} from './ip-protocol.js';
import type { Ipv6ExtensionName } from './types.js';

export function ipv6ExtensionName(protocol: number): Ipv6ExtensionName | undefined {
  switch (protocol) {
    case IPPROTO_HOPOPTS:
      return 'hop-by-hop';
    case IPPROTO_ROUTING:
      return 'routing';
    case IPPROTO_FRAGMENT:
      return 'fragment';
    case IPPROTO_DSTOPTS:
      return 'destination-options';
    case IPPROTO_AH:
      return 'authentication';
    default:
      return undefined;
  }
}

/** Header length from its length byte: AH counts 4-byte words minus 2 (RFC 4302), the rest 8-byte words minus 1. */
export function ipv6ExtensionBytes(protocol: number, lengthField: number): number {
  if (protocol === IPPROTO_FRAGMENT) return 8;
  if (protocol === IPPROTO_AH) return (lengthField + 2) * 4;
  return (lengthField + 1) * 8;
}

import type { DecodedPacket, PacketLayer } from './types.js';

/** Keeps the first layer the data ran out in: later layers were never reached. */
export function markTruncated(packet: DecodedPacket, layer: PacketLayer): void {
  if (packet.truncated) return;
  packet.truncated = true;
  packet.truncatedLayer = layer;
}

export function markMalformed(packet: DecodedPacket, layer: PacketLayer, reason: string): void {
  packet.malformed ??= { layer, reason };
}

/** For headers whose packet length is not stated (Ethernet, ARP, a GSO packet): only the data bounds them. */
export const UNSTATED_END = Number.POSITIVE_INFINITY;

/** Bytes a header starting at `offset` may use: up to where the data or the enclosing packet ends. */
export function roomLeft(data: Uint8Array, offset: number, declaredEnd: number): number {
  return Math.min(data.length, declaredEnd) - offset;
}

/**
 * True when `needed` bytes from `offset` are there. Otherwise records why: the data ran out
 * (a sampler truncated the packet) or the enclosing header's length ends inside this header.
 */
export function hasRoom(
  packet: DecodedPacket,
  data: Uint8Array,
  offset: number,
  needed: number,
  declaredEnd: number,
  layer: PacketLayer,
): boolean {
  const wanted = offset + needed;
  if (wanted <= data.length && wanted <= declaredEnd) return true;
  if (declaredEnd < wanted && declaredEnd <= data.length) {
    markMalformed(packet, layer, `the ${layer} header needs ${needed} bytes but the enclosing length leaves ${declaredEnd - offset}`);
  } else {
    markTruncated(packet, layer);
  }
  return false;
}

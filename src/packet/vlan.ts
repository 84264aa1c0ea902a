import type { VlanTag } from './types.js';

export function decodeVlanTag(tpid: number, tci: number): VlanTag {
  return { tpid, pcp: tci >>> 13, dei: (tci & 0x1000) !== 0, vid: tci & 0x0fff };
}

export const ETHERTYPE_IPV4 = 0x0800;
export const ETHERTYPE_ARP = 0x0806;
export const ETHERTYPE_IPV6 = 0x86dd;
export const ETHERTYPE_VLAN = 0x8100;
export const ETHERTYPE_QINQ = 0x88a8;
/** Pre-standard QinQ outer tag, still emitted by some switches. */
export const ETHERTYPE_QINQ_LEGACY = 0x9100;

export function isVlanTpid(etherType: number): boolean {
  return (
    etherType === ETHERTYPE_VLAN || etherType === ETHERTYPE_QINQ || etherType === ETHERTYPE_QINQ_LEGACY
  );
}

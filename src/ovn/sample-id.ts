const FNV32_OFFSET_BASIS = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text` (Go's hash/fnv New32a over []byte(text)). */
export function fnv1a32(text: string): number {
  let hash = FNV32_OFFSET_BASIS;
  for (const byte of utf8.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV32_PRIME);
  }
  return hash >>> 0;
}

/** The ACL fields ovn-kubernetes derives a Sample's metadata from. */
export interface AclSampleIdentity {
  /** external_ids["k8s.ovn.org/id"]; an empty string when the ACL has none. */
  readonly primaryId: string;
  readonly match: string;
  readonly action: string;
}

/**
 * The Sample.metadata (observation point id) ovn-kubernetes gives an ACL. Match and action are
 * hashed in so that editing a rule yields a new point id: connections that conntrack still tags
 * with the old id then decode as stale instead of being attributed to the edited rule.
 */
export function aclSampleMetadata(acl: AclSampleIdentity): number {
  return fnv1a32(acl.primaryId + acl.match + acl.action);
}

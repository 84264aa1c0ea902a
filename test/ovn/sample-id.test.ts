import { describe, expect, it } from 'vitest';
import { aclSampleMetadata, fnv1a32 } from '../../src/ovn/sample-id';
import { hashForOvn } from './support/ovnk-fixtures';

describe('fnv1a32', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('hashes UTF-8 bytes, as Go does for []byte(string)', () => {
    // "é" is two UTF-8 bytes (c3 a9): hashing UTF-16 code units would give another value.
    let expected = 0x811c9dc5;
    for (const byte of [0xc3, 0xa9]) {
      expected = Math.imul(expected ^ byte, 0x01000193) >>> 0;
    }
    expect(fnv1a32('é')).toBe(expected);
  });
});

describe('aclSampleMetadata', () => {
  it('hashes k8s.ovn.org/id, then match, then action, with nothing between them', () => {
    const acl = {
      primaryId: 'default-network-controller:NetworkPolicy:shop:web:Ingress:0:None:-1',
      match: 'ip4.src == {$a1} && outport == @a2',
      action: 'allow-related',
    };
    expect(aclSampleMetadata(acl)).toBe(fnv1a32(acl.primaryId + acl.match + acl.action));
  });

  it('changes when only the match or only the action changes, so edited rules get new point ids', () => {
    const base = { primaryId: 'c:AdminNetworkPolicy:deny-all:Ingress:0:None', match: 'outport == @a1', action: 'drop' };
    const ids = new Set([
      aclSampleMetadata(base),
      aclSampleMetadata({ ...base, match: 'outport == @a1 && tcp' }),
      aclSampleMetadata({ ...base, action: 'allow-related' }),
    ]);
    expect(ids.size).toBe(3);
  });
});

describe('hashForOvn (fixture port group names)', () => {
  it('is "a" + decimal FNV-1a 64-bit, as util.HashForOVN', () => {
    expect(hashForOvn('')).toBe(`a${0xcbf29ce484222325n}`);
    expect(hashForOvn('a')).toBe(`a${0xaf63dc4c8601ec8cn}`);
    expect(hashForOvn('foobar')).toBe(`a${0x85944171f73967e8n}`);
  });
});

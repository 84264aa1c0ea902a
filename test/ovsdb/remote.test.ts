import { describe, expect, it } from 'vitest';
import { OvsdbRemoteError } from '../../src/errors';
import { formatRemote, parseRemotes } from '../../src/ovsdb/remote';

describe('parseRemotes (ovn-nbctl syntax)', () => {
  it('parses unix, tcp, ssl, IPv6 literals, default ports and comma-separated clusters', () => {
    expect(parseRemotes('unix:/var/run/ovn/ovnnb_db.sock')).toEqual([{ kind: 'unix', path: '/var/run/ovn/ovnnb_db.sock' }]);
    expect(parseRemotes('tcp:10.0.0.1:6641,ssl:ovn-db.example:6643, tcp:[fd00::1]:6641,tcp:[::1],ssl:10.0.0.2')).toEqual([
      { kind: 'tcp', host: '10.0.0.1', port: 6641 },
      { kind: 'ssl', host: 'ovn-db.example', port: 6643 },
      { kind: 'tcp', host: 'fd00::1', port: 6641 },
      { kind: 'tcp', host: '::1', port: 6640 },
      { kind: 'ssl', host: '10.0.0.2', port: 6640 },
    ]);
    expect(parseRemotes(['tcp:a:1', 'tcp:b:2,tcp:c:3']).map(formatRemote)).toEqual(['tcp:a:1', 'tcp:b:2', 'tcp:c:3']);
    expect(formatRemote({ kind: 'ssl', host: 'fd00::1', port: 6641 })).toBe('ssl:[fd00::1]:6641');
  });

  it.each([
    ['', /No OVSDB remote/],
    ['tcp:fd00::1:6641', /brackets/],
    ['tcp:[fd00::1:6641', /closing/],
    ['tcp:[10.0.0.1]:6641', /not an IPv6/],
    ['tcp:10.0.0.1:99999', /not a port/],
    ['tcp::6641', /host is missing/],
    ['ptcp:6641', /listening remote/],
    ['http://x', /unix:, tcp: or ssl:/],
    ['unix:', /socket path/],
  ])('rejects %j with a typed error', (text, why) => {
    expect(() => parseRemotes(text)).toThrow(OvsdbRemoteError);
    expect(() => parseRemotes(text)).toThrow(why);
  });
});

import { expect, it } from 'vitest';

import { encodePsample, InvalidOptionError, openPsample, type OpenPsampleOptions } from '../../src/index';

const source = { protocol: 'usersock', familyId: 34, groupId: 11 } as const;

it.each<[string, OpenPsampleOptions, RegExp]>([
  ['config with an injection source', { source, config: true }, /config: group events come from the kernel/],
  ['a non-boolean flag', { source, listenAllNsid: 'yes' as unknown as boolean }, /listenAllNsid must be true or false/],
  ['a group id out of range', { source, groups: [-1] }, /groups\[0\] must be an integer/],
  ['a usersock group above 32', { source: { ...source, groupId: 33 } }, /source.groupId must be an integer from 1 to 32/],
  ['a tiny receive buffer', { source, receiveBufferBytes: 10 }, /receiveBufferBytes/],
  ['an empty netns', { source, netns: '' }, /netns must be/],
])('rejects %s with INVALID_OPTION before opening anything', (_what, options, message) => {
  expect(() => openPsample(options)).toThrow(InvalidOptionError);
  expect(() => openPsample(options)).toThrow(message);
});

it('filters more groups than a classic BPF program can reach in userspace instead', () => {
  const groups = Array.from({ length: 300 }, (_, i) => i);
  const socket = openPsample({ source, groups });
  expect(socket.kernelFilter).toBe(false);
  socket.close();
});

it('refuses to encode values that do not fit their attribute', () => {
  expect(() => encodePsample({ data: new Uint8Array(70_000) })).toThrow(/at most 65531/);
  expect(() => encodePsample({ iifindex: 70_000 })).toThrow(InvalidOptionError);
  expect(() => encodePsample({ timestampNs: -1n })).toThrow(/64 bits/);
});

import { expect, it } from 'vitest';

import { createInjector, encodePsample } from '../../src/index';
import { runCli } from '../support/cli';
import { hostHasPsample } from '../support/host-kernel';
import { fileNetns } from '../support/netns';

const GROUP = 9;
const ns = fileNetns('ovnps-cli-listen');

it('listen streams live samples as JSON lines, stops after --count and reports the accounting', async () => {
  const run = runCli(['listen', '--netns', ns.name, '--source', `usersock:34:${GROUP}`, '--count', '3']);
  await run.listening;
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  const cookie = Uint8Array.from(Buffer.from('0200000500000064', 'hex'));
  for (let seq = 0; seq < 3; seq++) {
    injector.send(encodePsample({ group: 10, groupSeq: seq, proto: 0x800, userCookie: cookie }));
  }
  injector.close();
  expect(await run.exited).toBe(0);
  const lines = run.stdout().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => l.groupSeq)).toEqual([0, 1, 2]);
  expect(lines[0]).toMatchObject({ group: 10, obsDomainId: 0x02000005, obsPointId: 100, ovn: { appId: 2, datapathKey: 5 } });
  expect(run.stderr()).toMatch(/3 shown; received=3 kernelDrops=0 queueDrops=0 malformed=0/);
});

it.skipIf(hostHasPsample)('listen fails with the typed, actionable error where the kernel has no psample', async () => {
  const run = runCli(['listen']);
  expect(await run.exited).toBe(1);
  expect(run.stderr()).toMatch(/load the psample module.*\[PSAMPLE_UNAVAILABLE\]/);
});

it.each([
  [['listen', '--source', 'usersock:34:9', '--duration', 'abc'], /--duration abc: give a whole number of at least 1/],
  [['listen', '--source', 'usersock:34:9', '--count', '0'], /--count 0: give a whole number of at least 1/],
  [['listen', '--source', 'usersock:34:9:extra'], /--source usersock:34:9:extra: use usersock:FAMILY_ID:GROUP_ID/],
  [['decode', '--cookie', '2b000001000003ea', '--hex', '00'], /--cookie decodes a cookie alone/],
])('usage errors exit 2 at once, without opening anything: %j', async (args, message) => {
  const run = runCli(args);
  expect(await run.exited).toBe(2);
  expect(run.stderr()).toMatch(message);
});

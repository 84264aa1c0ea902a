import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';

/** A network namespace of this test run (`ip netns add`), removed by the returned function. */
export function createNetns(prefix: string): { name: string; remove: () => void } {
  // The pid alone could meet a namespace a crashed run left behind.
  const name = `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
  execFileSync('ip', ['netns', 'add', name]);
  return { name, remove: () => execFileSync('ip', ['netns', 'del', name]) };
}

/**
 * The network namespace this test file injects and listens in. NETLINK_USERSOCK multicast reaches
 * every socket of the sender's namespace that joined the group, so a file that used the host's
 * namespace would hear (and count) the samples of another file, or of another test run on the same
 * machine. `name` is set before the file's tests run.
 */
export function fileNetns(prefix: string): { readonly name: string } {
  let ns: ReturnType<typeof createNetns> | undefined;
  beforeAll(() => {
    ns = createNetns(prefix);
  });
  afterAll(() => ns?.remove());
  return {
    get name(): string {
      if (ns === undefined) throw new Error('fileNetns(): the namespace exists only while the tests of the file run');
      return ns.name;
    },
  };
}

import { execFileSync } from 'node:child_process';

/** A network namespace of this test run (`ip netns add`), removed by the returned function. */
export function createNetns(prefix: string): { name: string; remove: () => void } {
  const name = `${prefix}-${process.pid}`;
  execFileSync('ip', ['netns', 'add', name]);
  return { name, remove: () => execFileSync('ip', ['netns', 'del', name]) };
}

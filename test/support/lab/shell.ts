import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs a setup command in the guest; a failure throws with the command's stderr, which says what broke. */
export function run(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

export function runInNetns(netns: string, command: string, args: readonly string[]): string {
  return run('ip', ['netns', 'exec', netns, command, ...args]);
}

/**
 * Generates traffic without blocking the event loop, so samples keep flowing to
 * JavaScript while it runs. Resolves even when the command fails: pings that
 * policy drops are expected to get no answer.
 */
export async function traffic(netns: string, command: string, args: readonly string[]): Promise<void> {
  await execFileAsync('ip', ['netns', 'exec', netns, command, ...args]).catch(() => undefined);
}

/** Lets samples already in the kernel reach a socket's reader before asserting that none came. */
export function settle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

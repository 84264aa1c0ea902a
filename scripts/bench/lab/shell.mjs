// Setup commands of the lab benchmark: a failure throws with the command's stderr, which says what broke.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export class BenchSetupError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'BenchSetupError';
    this.code = 'BENCH_SETUP';
  }
}

function failure(command, args, error) {
  const stderr = String(error.stderr ?? '').trim();
  return new BenchSetupError(`${command} ${args.join(' ')} failed: ${stderr || error.message}`, { cause: error });
}

export function run(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (error) {
    throw failure(command, args, error);
  }
}

export async function runAsync(command, args) {
  try {
    return (await execFileAsync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20 })).stdout;
  } catch (error) {
    throw failure(command, args, error);
  }
}

export function inNetns(netns, command, args) {
  return ['ip', ['netns', 'exec', netns, command, ...args]];
}

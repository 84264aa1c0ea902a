// A benchmark participant in its own process: it prints "ready" once its socket has joined the
// group, and its result as the last stdout line, in JSON.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

// Not an OvnPsampleError: other benchmarks load this helper before they know the package is built.
export class BenchChildError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
    this.name = 'BenchChildError';
  }
}

function childFailed(command, detail) {
  return new BenchChildError('BENCH_CHILD_FAILED', `${command}: ${detail}`);
}

export function startChild(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const name = [command, ...args].join(' ');
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const lines = [];
  let signalReady;
  const ready = new Promise((resolve) => {
    signalReady = resolve;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') signalReady();
    else lines.push(line);
  });
  const result = new Promise((resolve, reject) => {
    child.on('error', (error) => reject(childFailed(name, error.message)));
    child.on('close', (code, signal) => {
      const last = lines.at(-1);
      if (code !== 0 || last === undefined) {
        reject(childFailed(name, `exited with ${signal ?? code}: ${stderr.trim() || 'no output'}`));
        return;
      }
      resolve(JSON.parse(last));
    });
  });
  // A child that dies before "ready" must fail the wait instead of hanging it.
  const readyOrFailure = Promise.race([
    ready,
    result.then(() => {
      throw childFailed(name, 'exited before it was ready');
    }),
  ]);
  // Callers that only want the result never wait for "ready"; its failure must not go unhandled.
  readyOrFailure.catch(() => {});
  return {
    ready: readyOrFailure,
    result,
    signal: (signalName) => child.kill(signalName),
    kill: () => child.kill('SIGKILL'),
  };
}

export async function runToCompletion(command, args) {
  return startChild(command, args).result;
}

export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new BenchChildError(
          'BENCH_TIMEOUT',
          `${what} did not finish within ${ms / 1000} s: check that nothing else sends on the multicast group`,
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

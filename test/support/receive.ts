import type { PsampleSample, PsampleSocket } from '../../src/index';

/** Waits until `predicate` holds for the socket's counters, or fails after `limitMs`. */
export async function waitFor(check: () => boolean, limitMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Collects samples as they are emitted. */
export function collectSamples(socket: PsampleSocket): PsampleSample[] {
  const samples: PsampleSample[] = [];
  socket.on('sample', (s) => samples.push(s));
  return samples;
}

/** Lets anything in flight arrive, so "nothing more came" is a real observation. */
export function settle(ms = 200): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

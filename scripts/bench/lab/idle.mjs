// CPU that waiting costs: `listen` with and without the OVN decoder, no sample arriving, against a
// node process that does nothing. All three run at once (idle processes do not compete); each is
// measured from /proc over the same window, after start-up has settled.
import { setTimeout as sleep } from 'node:timers/promises';
import { idleParticipants } from './consumers.mjs';
import { startConsumer, stopConsumer } from './measure.mjs';
import { cpuNs } from './proc.mjs';

// Module loading, JIT, the OVN sync and the garbage collections right after them are start-up,
// not idleness.
const SETTLE_MS = 5_000;

export async function measureIdle(ctx, seconds) {
  const participants = idleParticipants(ctx).map((p) => ({ ...p, run: startConsumer(p.argv, '/dev/null') }));
  try {
    await Promise.all(participants.map((p) => p.run.ready));
    await sleep(SETTLE_MS);
    const before = participants.map((p) => cpuNs(p.run.state.child.pid));
    const wallBefore = performance.now();
    await sleep(seconds * 1000);
    const after = participants.map((p) => cpuNs(p.run.state.child.pid));
    const wallSeconds = (performance.now() - wallBefore) / 1000;
    return participants.map((p, i) => ({
      name: p.name,
      cpuPercent: before[i] === undefined || after[i] === undefined ? undefined : (100 * (after[i] - before[i])) / 1e9 / wallSeconds,
    }));
  } finally {
    await Promise.all(participants.map((p) => stopConsumer(p.run)));
  }
}

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';

// lab_boot's retry rule, run by bash itself. The emulator is a script that plays one
// console per boot: the kernel race behind a crash at boot cannot be provoked on demand.
const labDir = resolve(__dirname, '../../scripts/lab');
let work: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ovnps-lab-boot-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** Boots a guest whose consoles, one per boot, are `consoles` (the last one repeats). */
function boot(consoles: string[]) {
  consoles.forEach((text, i) => writeFileSync(join(work, `console-${i}`), text));
  const emulator = join(work, 'emulator');
  writeFileSync(
    emulator,
    `#!/bin/bash
n=$(cat "${work}/boots" 2>/dev/null || echo 0); echo $((n + 1)) >"${work}/boots"
[ -f "${work}/console-$n" ] || n=${consoles.length - 1}
for a; do case $a in file:*) cp "${work}/console-$n" "\${a#file:}";; esac; done
`,
  );
  chmodSync(emulator, 0o755);
  const script = `
    source "${labDir}/progress.sh"; source "${labDir}/boot.sh"
    LAB_WORK="${work}" LAB_CACHE="${work}" LAB_TIMEOUT_S=30 LAB_SMP=2 LAB_MEM_MB=64
    lab_qemu_args() { LAB_QEMU=("${emulator}"); }
    lab_boot test`;
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  const boots = Number(readFileSync(join(work, 'boots'), 'utf8'));
  return { status: run.status, stderr: run.stderr, boots, console: readFileSync(join(work, 'console.log'), 'utf8') };
}

const panic = '[    2.3] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n[    2.3] Kernel panic - not syncing: Fatal exception in interrupt\n';
const ready = 'LAB-READY mode=test uptime=3.1 kernel=6.12\nLAB-DONE mode=test exit=0 uptime=90\n';

it('a guest whose kernel dies before the lab starts is booted again, and the run says so', () => {
  const run = boot([panic, ready]);
  expect(run.status).toBe(0);
  expect(run.boots).toBe(2);
  expect(run.console).toContain('LAB-READY');
  expect(readFileSync(join(work, 'console.boot-1.log'), 'utf8')).toContain('Kernel panic');
  expect(run.stderr).toMatch(/guest kernel crashed while booting.*attempt 2 of 3/);
});

it('a guest that dies after the lab started is not booted again: that failure is the result', () => {
  const run = boot([`LAB-READY mode=test uptime=3 kernel=6.12\n${panic}`, ready]);
  expect(run.boots).toBe(1);
  expect(run.console).toContain('Kernel panic');
  expect(existsSync(join(work, 'console.boot-1.log'))).toBe(false);
});

it('a guest that never boots is tried three times, then its last console is the one kept', () => {
  const run = boot([panic]);
  expect(run.boots).toBe(3);
  expect(run.console).toContain('Kernel panic');
  expect(existsSync(join(work, 'console.boot-2.log'))).toBe(true);
  expect(run.stderr).toMatch(/attempt 3 of 3/);
});

it('a guest that stops without a crash and without starting the lab is not booted again', () => {
  const run = boot(['[    1.0] VFS: Cannot open root device\n', ready]);
  expect(run.boots).toBe(1);
});

// The C participants are built from source on every run, into a temporary directory, so the
// benchmark never depends on (or leaves behind) build artefacts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function compileTools(sourceDir, names) {
  const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-bench-'));
  const tools = {};
  for (const name of names) {
    const binary = join(dir, name);
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', binary, join(sourceDir, `${name}.c`)], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    tools[name] = binary;
  }
  return { tools, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

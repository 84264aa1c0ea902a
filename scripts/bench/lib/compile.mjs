// The C participants are built from source on every run, into a temporary directory, so the
// benchmark never depends on (or leaves behind) build artefacts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchChildError } from './child.mjs';

export function compileTools(sourceDir, names) {
  const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-bench-'));
  const tools = {};
  for (const name of names) {
    const binary = join(dir, name);
    try {
      execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-o', binary, join(sourceDir, `${name}.c`)], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      const missing = error.code === 'ENOENT';
      throw new BenchChildError(
        'BENCH_COMPILE_FAILED',
        missing
          ? 'no C compiler: install one (apt-get install gcc) so the benchmark can build its sender and reference reader'
          : `cc could not build ${name}.c (its errors are above): fix them, or report them with your compiler version`,
      );
    }
    tools[name] = binary;
  }
  return { tools, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

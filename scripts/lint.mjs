// The formatters and linters of both languages, as `npm test` runs them (`npm run lint`):
// prettier and eslint (typescript-eslint) on the TypeScript and scripts, clang-format and
// clang-tidy on native/ and the benchmarks' C. `--fix` rewrites what the formatters and eslint
// can fix instead of failing on it.
//
// clang-tidy parses every compile unit of the CMake build (the addon, the pure library, the
// native tests), about a minute on two cores; a unit whose preprocessed source, flags and
// checks are unchanged since its last clean run is not checked again (the cache is in
// native/build-tidy/).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fix = process.argv.includes('--fix');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const tidyDir = join(root, 'native', 'build-tidy');
const failures = [];

function run(what, command, args) {
  try {
    execFileSync(command, args, { cwd: root, stdio: 'inherit' });
  } catch {
    failures.push(what);
  }
}

/** Files under native/ (not its build folders or fuzz inputs) and scripts/bench/ whose names match. */
function nativeFiles(pattern) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('build') && entry.name !== 'corpus' && entry.name !== 'regressions') walk(path);
      } else if (pattern.test(entry.name)) found.push(relative(root, path));
    }
  };
  walk(join(root, 'native'));
  walk(join(root, 'scripts', 'bench'));
  return found.sort();
}
const cSources = () => nativeFiles(/\.(cc|h|c)$/);

function requireTool(name, apt) {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' });
  } catch {
    console.error(`lint: ${name} is missing: apt-get install ${apt} (scripts/install-deps.sh installs it)`);
    process.exit(1);
  }
}

/** Runs clang-tidy on the compile units that changed since they last passed, `jobs` at a time. */
async function clangTidy() {
  requireTool('clang-tidy', 'clang-tidy');
  execFileSync('cmake', ['-S', 'native', '-B', tidyDir, '-DCMAKE_EXPORT_COMPILE_COMMANDS=ON', '-DCMAKE_CXX_COMPILER=clang++'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // A source compiled into two targets (the addon and a kernel test: they differ only in N-API's
  // defines, which the socket's sources do not read) is checked once.
  const units = [
    ...new Map(JSON.parse(readFileSync(join(tidyDir, 'compile_commands.json'), 'utf8')).map((unit) => [unit.file, unit])).values(),
  ];
  const configs = ['.clang-tidy', ...nativeFiles(/^\.clang-tidy$/)].map((path) => `${path}\n${readFileSync(join(root, path), 'utf8')}`);
  const version = execFileSync('clang-tidy', ['--version'], { encoding: 'utf8' });
  const cacheFile = join(tidyDir, 'passed.json');
  const passed = new Set(existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : []);
  const keyOf = (unit) => {
    // The unit's own command, preprocessed: every header it includes, as compiled.
    const args = unit.command.split(' ').filter((arg) => arg !== '');
    const out = args.indexOf('-o');
    if (out >= 0) args.splice(out, 2);
    const [compiler, ...flags] = args.filter((arg) => arg !== '-c');
    const preprocessed = execFileSync(compiler, [...flags, '-E', '-P'], { cwd: unit.directory, maxBuffer: 256 << 20 });
    return createHash('sha256').update(version).update(configs.join('\0')).update(unit.command).update(preprocessed).digest('hex');
  };
  const keyed = units.map((unit) => ({ unit, key: keyOf(unit) }));
  const todo = keyed.filter(({ key }) => !passed.has(key));
  // What passes now: the unchanged units and those that pass below (stale keys are forgotten).
  const nowPassed = new Set(keyed.filter(({ key }) => passed.has(key)).map(({ key }) => key));
  let failed = false;
  const jobs = Math.max(1, availableParallelism());
  // .clang-tidy's 'native/' (for editors) also matches a checkout whose own path holds "native/",
  // and then node-addon-api's headers under node_modules: anchored at this tree's native/ instead.
  const headerFilter = `^${resolve(root).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/native/`;
  const queue = [...todo];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const { unit, key } = item;
      const output = await new Promise((resolve) => {
        const child = spawn('clang-tidy', ['-p', tidyDir, '--quiet', `--header-filter=${headerFilter}`, unit.file], {
          cwd: root,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        child.stdout.on('data', (chunk) => (text += chunk));
        child.stderr.on('data', () => undefined);
        child.on('close', (code) => resolve({ code, text }));
      });
      if (output.code === 0) nowPassed.add(key);
      else {
        failed = true;
        process.stdout.write(output.text);
      }
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  mkdirSync(tidyDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify([...nowPassed]));
  console.log(`clang-tidy: ${todo.length} of ${units.length} compile units checked (the rest unchanged since they passed)`);
  if (failed) failures.push('clang-tidy');
}

run('prettier', bin('prettier'), [fix ? '--write' : '--check', '--log-level', 'warn', '.']);
run('eslint', bin('eslint'), fix ? ['--fix', '.'] : ['.']);
requireTool('clang-format', 'clang-format');
run('clang-format', 'clang-format', [...(fix ? ['-i'] : ['--dry-run', '--Werror']), ...cSources()]);
await clangTidy();
if (failures.length > 0) {
  console.error(
    `lint: ${failures.join(', ')} failed${fix ? '' : ': `npm run format` fixes what the formatters can; the rest is named above'}`,
  );
  process.exit(1);
}

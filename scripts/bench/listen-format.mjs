// unshare -n node scripts/bench/listen-format.mjs [--before DIR] [--count N] [--rate R] [--rounds K]
//   (after npm run build; as root, in a network namespace of its own so no other usersock
//   traffic reaches the reader)
//
// What does `ovn-psample listen` cost per sample in each output format? The CLI reads N samples
// (50,000) multicast at R/s (10,000) by sender.c on NETLINK_USERSOCK, its stdout to a file;
// its CPU time (all threads, /proc/PID/task/*/schedstat) from the moment it listens until the
// last line is written, per sample. --format text and --format json alternate, K rounds
// (3), medians compared: the text line must cost less than the JSON one. --before DIR measures
// an older build's dist (its CLI) in the same rounds.
// The last line is the verdict:
//   RESULT ratio=<text/json> text_ns=<ns per sample> json_ns=<ns per sample>
//          [before_text_ns=… before_json_ns=…]
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runToCompletion } from './lib/child.mjs';
import { compileTools } from './lib/compile.mjs';
import { cpuNs } from './lab/proc.mjs';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: options } = parseArgs({
  options: {
    before: { type: 'string' },
    count: { type: 'string', default: '50000' },
    rate: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    family: { type: 'string', default: '30' },
    group: { type: 'string', default: '5' },
  },
});
const count = Number(options.count);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function lineCount(path) {
  const text = readFileSync(path);
  let lines = 0;
  for (let i = text.indexOf(10); i !== -1; i = text.indexOf(10, i + 1)) lines++;
  return lines;
}

/** ns of CPU per sample of one `listen` run of the CLI in `dist`. */
async function measure(sender, dist, format) {
  const out = join(tmpdir(), `ovn-psample-listen-${process.pid}.out`);
  const fd = openSync(out, 'w');
  const child = spawn(
    process.execPath,
    [join(dist, 'cli', 'main.js'), 'listen', '--source', `usersock:${options.family}:${options.group}`, '--format', format, '--no-enrich'],
    {
      stdio: ['ignore', fd, 'pipe'],
    },
  );
  closeSync(fd);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  try {
    for (let waited = 0; !stderr.includes('listening'); waited += 50) {
      if (waited > 10_000 || child.exitCode !== null) throw new Error(`listen did not start: ${stderr.trim()}`);
      await sleep(50);
    }
    const before = cpuNs(child.pid);
    await runToCompletion(sender, ['--group', options.group, '--family', options.family, '--count', String(count), '--rate', options.rate]);
    for (let waited = 0; lineCount(out) < count; waited += 50) {
      if (waited > 30_000) throw new Error(`listen wrote ${lineCount(out)} of ${count} lines: ${stderr.trim()}`);
      await sleep(50);
    }
    return (cpuNs(child.pid) - before) / count;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('close', resolve)));
    rmSync(out, { force: true });
  }
}

const { tools, remove } = compileTools(join(projectRoot, 'scripts', 'bench'), ['sender']);
const builds = [['', join(projectRoot, 'dist')]];
if (options.before !== undefined) builds.push(['before_', options.before]);
const results = {};
try {
  for (let round = 1; round <= Number(options.rounds); round++) {
    for (const [prefix, dist] of builds) {
      for (const format of ['text', 'json']) {
        const ns = await measure(tools.sender, dist, format);
        (results[`${prefix}${format}`] ??= []).push(ns);
        console.log(`round ${round}: ${prefix}${format} ${ns.toFixed(0)} ns a sample`);
      }
    }
  }
} finally {
  remove();
}
const m = Object.fromEntries(Object.entries(results).map(([name, values]) => [name, median(values)]));
const extra = options.before === undefined ? '' : ` before_text_ns=${m.before_text.toFixed(0)} before_json_ns=${m.before_json.toFixed(0)}`;
console.log(`RESULT ratio=${(m.text / m.json).toFixed(2)} text_ns=${m.text.toFixed(0)} json_ns=${m.json.toFixed(0)}${extra}`);

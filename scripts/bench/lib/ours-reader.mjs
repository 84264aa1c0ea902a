// ovn-psample as the benchmark's reader: decoded PsampleMessage objects delivered to a JS callback.
// Same contract as ref-reader.c: prints "ready" once joined, then one JSON line when --count
// messages were received or dropped, or nothing arrived for QUIET_MS.
//
//   node ours-reader.mjs --group G --family F --count N --rcvbuf BYTES [--clock-offset NS]
//
// --clock-offset (CLOCK_REALTIME - CLOCK_MONOTONIC, from `sender --clock-offset`) turns on latency:
// each sample's TIMESTAMP (realtime at send) is compared with the callback's hrtime.
// The global `performance` is a lazy getter: reading it in the per-sample callback costs time
// that would be charged to ovn-psample.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openPsample } from 'ovn-psample';
import { latencySummary } from './percentiles.mjs';

const FIRST_MESSAGE_TIMEOUT_MS = 20_000;
const QUIET_MS = 500;

const { values } = parseArgs({
  options: {
    group: { type: 'string' },
    family: { type: 'string' },
    count: { type: 'string' },
    rcvbuf: { type: 'string' },
    'clock-offset': { type: 'string' },
  },
});
const count = Number(values.count);
const clockOffset = values['clock-offset'] === undefined ? undefined : BigInt(values['clock-offset']);

const socket = openPsample({
  source: { protocol: 'usersock', familyId: Number(values.family), groupId: Number(values.group) },
  receiveBufferBytes: Number(values.rcvbuf),
});

const latencies = clockOffset === undefined ? undefined : new Float64Array(count);
let received = 0;
let dropped = 0;
let first = 0;
let last = 0;
let finished = false;

socket.on('sample', (sample) => {
  const now = performance.now();
  if (latencies !== undefined && received < count) {
    latencies[received] = Number(process.hrtime.bigint() + clockOffset - sample.timestampNs);
  }
  if (received === 0) first = now;
  last = now;
  received += 1;
  if (received + dropped >= count) finish('count');
});
socket.on('drop', (event) => {
  dropped += event.count;
  if (received + dropped >= count) finish('count');
});
socket.on('error', (error) => {
  process.stderr.write(`ours-reader: ${error.code ?? ''} ${error.message}\n`);
  finish('error');
});

// Checked on a timer rather than per message so the hot path only counts.
let seenAtLastCheck = -1;
let quietSince = performance.now();
const quietCheck = setInterval(() => {
  const now = performance.now();
  if (received !== seenAtLastCheck) {
    seenAtLastCheck = received;
    quietSince = now;
  } else if (received > 0 ? now - quietSince >= QUIET_MS : now - quietSince >= FIRST_MESSAGE_TIMEOUT_MS) {
    finish('quiet');
  }
}, 100);

function finish(reason) {
  if (finished) return;
  finished = true;
  clearInterval(quietCheck);
  const stats = socket.stats();
  socket.close();
  const result = {
    received,
    datagrams: stats.datagrams,
    kernelDrops: stats.kernelDrops,
    queueDrops: stats.queueDrops,
    enobufs: stats.enobufs,
    foreign: stats.foreign,
    malformed: stats.malformed,
    statsReceived: stats.received,
    seconds: (last - first) / 1000,
    cpuSeconds: cpuSecondsSince(cpuStart),
    stop: reason,
  };
  if (latencies !== undefined) result.latencyNs = latencySummary(latencies.subarray(0, Math.min(received, count)));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function cpuSecondsSince(start) {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1e6;
}

process.stdout.write('ready\n');
// All threads (reader, JS, GC): comparable with ref-reader's process CPU time.
const cpuStart = process.cpuUsage();

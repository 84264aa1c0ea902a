// One measured run of the lab benchmark: one consumer, one scenario, one offered rate.
//
// The consumer starts and joins psample's group; the scenario's warm-up samples are printed and
// left out (the count starts at the output's size after them). Then, with the consumer's CPU
// time and socket drops read from /proc, udp-flood sends for the fixed time; the kernel's own
// counter says how many samples that generated. The run ends when the consumer has printed every
// sample it did not lose, or has gone idle (socket empty, output still, no CPU used), or at the
// drain cap after the burst: what is not printed by then counts as lost. Drain is the time from
// the burst's last packet to the output's last write.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, unlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuNs, netlinkSockets, peakRssMb, threadCpuNs } from './proc.mjs';
import { BenchSetupError } from './shell.mjs';

const READY_TIMEOUT_MS = 120_000;
const STDERR_KEPT = 8192;
const POLL_MS = 100;
// The output must stand still this long, with the socket empty, before the lines are counted.
const QUIET_MS = 500;
// Less CPU than this share of the wall time is idle: a consumer that lost samples inside itself
// never reaches the count, and is done once idle this long. (A major GC under TCG can stop the
// output for seconds, but not the CPU.)
const IDLE_CPU_SHARE = 0.1;
const IDLE_MS = 1_000;
// A consumer gets this long to exit after SIGTERM before SIGKILL; its figures are taken already.
const STOP_GRACE_MS = 1_000;
// With node options (a profiler) the consumer writes its profile as it exits.
const PROFILED_STOP_GRACE_MS = 60_000;
const WARMUP_SETTLE_MS = 300;
const WARMUP_LIMIT_MS = 5_000;
// A warm-up burst is printed before the measured one starts: still this long, at most the drain cap.
const WARMUP_BURST_SETTLE_MS = 1_000;
const WARMUP_BURST_RATE_UNPACED = 10_000;

export class BenchRunError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BenchRunError';
    this.code = 'BENCH_RUN';
  }
}

/**
 * Samples printed in FILE from byte OFFSET to END: one per line, or with `samplesPerLine` (a
 * regular expression whose group 1 is a line's count, or a number) that many per line. Only whole
 * lines are read; returns the count and where the next whole line starts.
 */
function countSamples(fd, offset, end, samplesPerLine) {
  const chunk = Buffer.allocUnsafe(4 << 20);
  let samples = 0;
  let position = offset;
  while (position < end) {
    const n = readSync(fd, chunk, 0, Math.min(chunk.length, end - position), position);
    if (n === 0) break;
    const last = chunk.lastIndexOf(10, n - 1);
    if (last === -1) {
      if (n < chunk.length) break; // the rest is a line still being written
      throw new BenchRunError(`a line of more than ${chunk.length} bytes at ${position} in the output`);
    }
    if (samplesPerLine === undefined || typeof samplesPerLine === 'number') {
      for (let i = chunk.indexOf(10, 0); i !== -1 && i <= last; i = chunk.indexOf(10, i + 1)) samples += samplesPerLine ?? 1;
    } else {
      for (const line of chunk.toString('latin1', 0, last).split('\n')) samples += Number(samplesPerLine.exec(line)?.[1] ?? 0);
    }
    position += last + 1;
  }
  return { samples, next: position };
}

/** Starts the consumer with stdout to OUTPUT; resolves once it says it is listening. */
export function startConsumer(argv, output) {
  const out = openSync(output, 'w');
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', out, 'pipe'] });
  closeSync(out);
  const state = { child, stderr: '', reportedDrops: { kernel: 0, queue: 0 }, exited: false };
  const exited = new Promise((resolve) =>
    child.on('close', (code, signal) => {
      state.exited = true;
      resolve({ code, signal });
    }),
  );
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new BenchRunError(`${argv.join(' ')} did not say it was listening within ${READY_TIMEOUT_MS / 1000} s: ${state.stderr.trim()}`),
        ),
      READY_TIMEOUT_MS,
    );
    child.on('error', (error) => reject(new BenchRunError(`${argv[0]}: ${error.message}`)));
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new BenchRunError(`${argv.join(' ')} exited (${signal ?? code}) before it listened: ${state.stderr.trim() || 'no message'}`));
    });
    createInterface({ input: child.stderr }).on('line', (line) => {
      // Only the tail explains a failure; a long run's drop lines would fill memory.
      state.stderr = `${state.stderr}${line}\n`.slice(-STDERR_KEPT);
      // ovn-psample's 'drop' lines: "N kernel|queue drop(s), T in all" (T: of that kind, since
      // open); watch logs them as JSON: "kind":"queue","count":N,"total":T.
      const drop = /(kernel|queue) drop\(s\), (\d+) in all/.exec(line) ?? /"kind":"(kernel|queue)","count":\d+,"total":(\d+)/.exec(line);
      if (drop) state.reportedDrops[drop[1]] = Number(drop[2]);
      if (/listening/.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  ready.catch(() => child.kill('SIGKILL'));
  return { state, ready, exited };
}

/** SIGTERM, then SIGKILL after graceMs; how long it took, and the exit summary if any. */
export async function stopConsumer({ state, exited }, graceMs = STOP_GRACE_MS) {
  const asked = performance.now();
  if (!state.exited) state.child.kill('SIGTERM');
  const timer = setTimeout(() => state.child.kill('SIGKILL'), graceMs);
  const { code, signal } = await exited;
  clearTimeout(timer);
  // "… shown; received=N kernelDrops=N [queueDrops=N] … closeDiscards=N" on stderr at exit (watch: its JSON summary).
  const summary =
    /received=(\d+) kernelDrops=(\d+)(?: queueDrops=(\d+))?/.exec(state.stderr) ??
    /"received":(\d+),.*"kernelDrops":(\d+),"queueDrops":(\d+)/.exec(state.stderr);
  // Taken from the socket but not delivered when the consumer stopped: a backlog it still held.
  const discards = /closeDiscards=(\d+)/.exec(state.stderr) ?? /"closeDiscards":(\d+)/.exec(state.stderr);
  return {
    exit: signal ?? code,
    exitMs: Math.round(performance.now() - asked),
    selfReported: summary && {
      received: Number(summary[1]),
      kernelDrops: Number(summary[2]),
      queueDrops: Number(summary[3] ?? 0),
      ...(discards ? { closeDiscards: Number(discards[1]) } : {}),
    },
  };
}

/** Waits until OUTPUT has not grown for settleMs (the warm-up's samples are printed). */
async function settled(fd, settleMs = WARMUP_SETTLE_MS, limitMs = WARMUP_LIMIT_MS) {
  let size = fstatSync(fd).size;
  const limit = Date.now() + limitMs;
  for (;;) {
    await sleep(settleMs);
    const now = fstatSync(fd).size;
    if (now === size || Date.now() > limit) return now;
    size = now;
  }
}

/**
 * For a consumer that writes a line per interval whatever came (countsAtExit: the agent), output
 * that stops growing says nothing: it has drained the warm-up once a whole line of its says it
 * counted no sample. Returns where that line ends, so the burst's count starts after it.
 */
async function quietInterval(fd, offset, samplesPerLine, limitMs) {
  const limit = Date.now() + limitMs;
  let position = offset;
  for (;;) {
    await sleep(POLL_MS);
    const size = fstatSync(fd).size;
    const text = Buffer.alloc(size - position);
    readSync(fd, text, 0, text.length, position);
    const whole = text.lastIndexOf(10);
    let at = position;
    for (const line of text
      .toString('latin1', 0, whole + 1)
      .split('\n')
      .slice(0, -1)) {
      at += line.length + 1;
      if (samplesPerLine.exec(line)?.[1] === '0') return at;
    }
    if (whole >= 0) position += whole + 1;
    if (Date.now() > limit) return position;
  }
}

/**
 * RATE is in samples/s; udp-flood is paced at RATE / the scenario's samples per packet (0: unpaced).
 * PROFILE (bench:lab --perf: perf.mjs's recorder for this run) records the consumer from the burst's
 * start until the figures are taken, and writes its report once the consumer has stopped.
 * @returns the run's figures: generated, received, kernelDrops, queueDrops, left (not printed by
 * the end: lost inside the consumer or still queued at the cap), loss, cpuSeconds,
 * cpuPerSampleUs (and threadCpuPerSampleUs: main, psample-reader, other), peakRssMb, outputBytesPerSample (what it wrote per sample received), drainSeconds, drainCapped, and udp-flood's sent and achieved rates
 * (and with PROFILE, the profile's file).
 */
export async function measureRun({ consumer, ctx, scenario, rate, seconds, warmupSeconds = 0, drainCapSeconds, output, profile }) {
  const argv = consumer.argv(ctx);
  const samplesPerLine = consumer.samplesPerLine === 'packet' ? scenario.samplesPerPacket : consumer.samplesPerLine;
  const started = startConsumer(argv, output);
  const { state } = started;
  const fd = openSync(output, 'r');
  const packetRateOf = (samplesPerSecond) =>
    samplesPerSecond === 0 ? 0 : Math.max(1, Math.round(samplesPerSecond / scenario.samplesPerPacket));
  let recording;
  try {
    await started.ready;
    const pid = state.child.pid;
    await scenario.warmup();
    let offset = await settled(fd);
    if (warmupSeconds > 0) {
      await scenario.flood(['--seconds', String(warmupSeconds), '--rate', String(packetRateOf(rate || WARMUP_BURST_RATE_UNPACED))]);
      offset = consumer.countsAtExit
        ? await quietInterval(fd, offset, consumer.samplesPerLine, drainCapSeconds * 1000)
        : await settled(fd, WARMUP_BURST_SETTLE_MS, drainCapSeconds * 1000);
    }

    recording = await profile?.record(pid);
    const counterBefore = scenario.generatedCounter();
    const socketsBefore = netlinkSockets(pid);
    const queueDropsBefore = state.reportedDrops.queue;
    const cpuBefore = cpuNs(pid);
    const threadsBefore = threadCpuNs(pid);
    if (socketsBefore === undefined || cpuBefore === undefined)
      throw new BenchRunError(`${consumer.name} exited before the burst: ${state.stderr.trim()}`);
    const packetRate = packetRateOf(rate);
    const burst = await scenario.flood(['--seconds', String(seconds), '--rate', String(packetRate)]);
    const generated = scenario.generatedBetween(counterBefore, scenario.generatedCounter());
    if (generated === 0) throw new BenchSetupError(`${scenario.nothingGenerated} (udp-flood: ${JSON.stringify(burst)})`);

    const capAt = Number(BigInt(burst.lastNs) / 1_000_000n) + drainCapSeconds * 1000;
    let size = fstatSync(fd).size;
    let grewAt = performance.now();
    let cpu = cpuNs(pid);
    let busyAt = grewAt;
    let counted = { offset, samples: 0 };
    let capped = false;
    let sockets = socketsBefore;
    for (;;) {
      await sleep(POLL_MS);
      const now = performance.now();
      const current = fstatSync(fd).size;
      if (current !== size) {
        size = current;
        grewAt = now;
      }
      const cpuNow = cpuNs(pid);
      if (cpuNow === undefined) break; // exited: reported below
      if (cpuNow - cpu > IDLE_CPU_SHARE * POLL_MS * 1e6) busyAt = now;
      cpu = cpuNow;
      if (Date.now() >= capAt) {
        capped = true;
        break;
      }
      if (now - grewAt < QUIET_MS) continue;
      sockets = netlinkSockets(pid) ?? sockets;
      if (sockets.queuedBytes > 0) continue;
      const { samples, next } = countSamples(fd, counted.offset, size, samplesPerLine);
      counted = { offset: next, samples: counted.samples + samples };
      const dropped = sockets.drops - socketsBefore.drops + state.reportedDrops.queue - queueDropsBefore;
      if (counted.samples + dropped >= generated || now - busyAt >= IDLE_MS) break;
    }
    // The figures are taken here: whatever the consumer does after SIGTERM is not the run's.
    const cpuAfter = cpuNs(pid);
    const threadsAfter = threadCpuNs(pid);
    const rss = peakRssMb(pid);
    sockets = netlinkSockets(pid) ?? sockets;
    const end = fstatSync(fd, { bigint: true });
    let received = counted.samples + countSamples(fd, counted.offset, Number(end.size), samplesPerLine).samples;
    const queueDrops = state.reportedDrops.queue - queueDropsBefore;
    await recording?.stop();
    const stopped = await stopConsumer(started, ctx.nodeArgs?.length ? PROFILED_STOP_GRACE_MS : STOP_GRACE_MS);
    if (cpuAfter === undefined) throw new BenchRunError(`${consumer.name} exited during the run (${stopped.exit}): ${state.stderr.trim()}`);
    if (consumer.countsAtExit) received = counted.samples + countSamples(fd, counted.offset, fstatSync(fd).size, samplesPerLine).samples;

    const kernelDrops = sockets.drops - socketsBefore.drops;
    const cpuSeconds = (cpuAfter - cpuBefore) / 1e9;
    const drainNs = end.mtimeNs - BigInt(burst.lastNs);
    const profileFile = recording?.report({ cpuSeconds, received });
    return {
      packetRate,
      sent: burst.sent,
      sendFailures: burst.failed,
      achievedRate: (burst.sent * scenario.samplesPerPacket) / burst.seconds,
      generated,
      received,
      kernelDrops,
      queueDrops,
      left: Math.max(0, generated - received - kernelDrops - queueDrops),
      loss: Math.max(0, generated - received) / generated,
      cpuSeconds,
      cpuPerSampleUs: received > 0 ? (cpuSeconds * 1e6) / received : undefined,
      threadCpuPerSampleUs:
        received > 0 && threadsBefore !== undefined && threadsAfter !== undefined
          ? Object.fromEntries(Object.keys(threadsAfter).map((name) => [name, (threadsAfter[name] - threadsBefore[name]) / 1e3 / received]))
          : undefined,
      peakRssMb: rss,
      outputBytesPerSample: received > 0 ? (Number(end.size) - offset) / received : undefined,
      drainSeconds: received > 0 ? Math.max(0, Number(drainNs) / 1e9) : undefined,
      drainCapped: capped,
      drainCapSeconds,
      stop: { exit: stopped.exit, afterMs: stopped.exitMs },
      selfReported: stopped.selfReported,
      ...(stopped.selfReported ? {} : { stderrTail: state.stderr.slice(-500) }),
      ...(profileFile ? { profile: profileFile } : {}),
    };
  } catch (error) {
    recording?.kill();
    state.child.kill('SIGKILL');
    await started.exited;
    throw error;
  } finally {
    closeSync(fd);
    unlinkSync(output);
  }
}

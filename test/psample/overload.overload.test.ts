import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PsampleStats } from '../../src/index';
import { dist } from '../support/child';
import { fileNetns } from '../support/netns';
import { waitFor } from '../support/receive';

// Overload, black-box. A consumer process reads samples with openPsample and does with each what
// `ovn-psample listen --format json` does (short of writing the line); its sustained rate is
// measured first, on samples already waiting for it. Then C senders (scripts/bench/sender.c)
// multicast realistic samples at twice that rate for 60 s; then again into a consumer that
// stalls its event loop 500 ms every second. Asserted: every message sent is received or counted
// as a drop, exactly; the reader was really overloaded (drops); its RSS (read from /proc, from
// outside) stops growing; its event loop keeps turning (a report every second) and its turns do
// not grow longer. The RSS curve and the event-loop delays are printed for the record.
const GROUP = 7;
const FAMILY = 34;
const FLOOD_SECONDS = 60;
const CALIBRATION_MESSAGES = 30_000;
// One sender process cannot multicast much faster than one reader reads: these share the rate.
const SENDERS = 2;
const ns = fileNetns('ovnps-overload');

/** What the consumer reports each second its event loop turns. */
interface Tick {
  second: number;
  received: number;
  kernelDrops: number;
  queueDrops: number;
  loopDelayMaxMs: number;
}

/** The consumer's RSS, read from outside each second: a blocked event loop cannot hide it. */
interface RssSample {
  second: number;
  mib: number;
}

// `calibrate N`: the rate at which it takes in the N samples waiting for it. `flood`: start the
// reports (and the stalls). `finish SENT`: once SENT messages are received or counted, close and
// report the final counts.
const consumer = `
  const { openPsample } = require(${JSON.stringify(dist)});
  const { formatSample } = require(${JSON.stringify(path.join(dist, 'output', 'sample-lines.js'))});
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const stallMs = Number(process.env.STALL_MS);
  const socket = openPsample({ netns: process.env.NETNS, source: { protocol: 'usersock', familyId: ${FAMILY}, groupId: ${GROUP} } });
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  let received = 0, first = 0, last = 0, text = 0;
  socket.on('sample', (sample) => {
    text += formatSample(sample, 'json').length;
    last = performance.now();
    if (++received === 1) first = last;
  });
  const whenAccounted = (sent, then) => {
    const poll = setInterval(() => {
      const s = socket.stats();
      if (received + s.kernelDrops + s.queueDrops < sent) return;
      clearInterval(poll);
      then();
    }, 20);
  };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let start = 0, reports, stalls;
  const report = () => {
    const s = socket.stats();
    say({ tick: { second: (performance.now() - start) / 1000, received, kernelDrops: s.kernelDrops, queueDrops: s.queueDrops,
      loopDelayMaxMs: delay.max / 1e6 } });
    delay.reset();
  };
  require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
    const [command, value] = line.split(' ');
    if (command === 'calibrate') {
      received = 0;
      whenAccounted(Number(value), () => say({ calibrated: received / ((last - first) / 1000) }));
    } else if (command === 'flood') {
      received = 0;
      start = performance.now();
      delay.enable();
      reports = setInterval(report, 1000);
      if (stallMs > 0) stalls = setInterval(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, stallMs), 1000);
    } else if (command === 'finish') {
      clearInterval(stalls);
      whenAccounted(Number(value), () => {
        clearInterval(reports);
        socket.close();
        say({ final: socket.stats() });
        process.exit(0);
      });
    }
  });
  say({ ready: true });
`;

class Consumer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: Record<string, unknown>[] = [];
  readonly rss: RssSample[] = [];
  #sampling: NodeJS.Timeout | undefined;

  constructor(stallMs: number) {
    this.child = spawn(process.execPath, ['-e', consumer], { env: { ...process.env, NETNS: ns.name, STALL_MS: String(stallMs) } });
    let partial = '';
    this.child.stdout.on('data', (data: Buffer) => {
      const complete = (partial + data.toString()).split('\n');
      partial = complete.pop()!;
      for (const line of complete) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    this.child.stderr.on('data', (data: Buffer) => process.stderr.write(data));
  }

  async next(key: string, limitMs: number): Promise<unknown> {
    await waitFor(() => this.lines.some((line) => key in line), limitMs, `the consumer's "${key}"`);
    const index = this.lines.findIndex((line) => key in line);
    return this.lines.splice(index, 1)[0]![key];
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  sampleRss(): void {
    const start = performance.now();
    this.#sampling = setInterval(() => {
      const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1];
      this.rss.push({ second: (performance.now() - start) / 1000, mib: Number(kib) / 1024 });
    }, 1000);
  }

  ticks(): Tick[] {
    return this.lines.filter((line) => 'tick' in line).map((line) => line.tick as Tick);
  }

  stop(): void {
    clearInterval(this.#sampling);
    this.child.kill();
  }
}

let senderBinary: string;
let buildDir: string;
// Senders still running when a test fails or times out are killed, not left flooding.
const senders = new Set<ChildProcessWithoutNullStreams>();

function sendOnce(args: string[]): Promise<{ sent: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns.name, senderBinary, '--group', String(GROUP), '--family', String(FAMILY), ...args]);
    senders.add(child);
    child.on('exit', () => senders.delete(child));
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (status) =>
      status === 0 ? resolve(JSON.parse(out) as { sent: number }) : reject(new Error(`sender: exit ${status}: ${err}`)),
    );
  });
}

async function send(count: number, rate?: number): Promise<{ sent: number; rate: number }> {
  const started = performance.now();
  const each = await Promise.all(
    Array.from({ length: SENDERS }, (_, i) => {
      const share = Math.floor(count / SENDERS) + (i < count % SENDERS ? 1 : 0);
      return sendOnce(['--count', String(share), ...(rate === undefined ? [] : ['--rate', String(Math.round(rate / SENDERS))])]);
    }),
  );
  const sent = each.reduce((sum, s) => sum + s.sent, 0);
  return { sent, rate: sent / ((performance.now() - started) / 1000) };
}

// The consumer is stopped while the samples are sent, then takes them in with the CPU to itself.
async function sustainedRate(): Promise<number> {
  const probe = new Consumer(0);
  try {
    await probe.next('ready', 10_000);
    probe.send(`calibrate ${CALIBRATION_MESSAGES}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(probe.child.pid!, 'SIGSTOP');
    try {
      await send(CALIBRATION_MESSAGES);
    } finally {
      process.kill(probe.child.pid!, 'SIGCONT');
    }
    return (await probe.next('calibrated', 60_000)) as number;
  } finally {
    probe.stop();
  }
}

describe(`overload: twice the sustained rate for ${FLOOD_SECONDS} s`, () => {
  let sustained = 0;

  beforeAll(async () => {
    buildDir = mkdtempSync(path.join(tmpdir(), 'ovn-psample-overload-'));
    senderBinary = path.join(buildDir, 'sender');
    execFileSync('cc', ['-O2', '-o', senderBinary, path.join(__dirname, '..', '..', 'scripts', 'bench', 'sender.c')]);
    sustained = await sustainedRate();
  }, 120_000);

  afterAll(() => {
    for (const sender of senders) sender.kill('SIGKILL');
    rmSync(buildDir, { recursive: true, force: true });
  });

  async function flood(stallMs: number): Promise<void> {
    const c = new Consumer(stallMs);
    try {
      await c.next('ready', 10_000);
      c.send('flood');
      c.sampleRss();
      const sent = await send(Math.round(2 * sustained * FLOOD_SECONDS), 2 * sustained);
      c.send(`finish ${sent.sent}`);
      const final = (await c.next('final', 300_000)) as PsampleStats;
      const ticks = c.ticks().filter((t) => t.second <= FLOOD_SECONDS);
      const rss = c.rss.filter((r) => r.second <= FLOOD_SECONDS);
      console.log(
        `overload, ${stallMs > 0 ? `consumer stalling ${stallMs} ms every second` : 'steady consumer'}: sustained ${Math.round(sustained)}/s, ` +
          `sent ${sent.sent} at ${Math.round(sent.rate)}/s (${(sent.rate / sustained).toFixed(2)}x); received ${final.received}, ` +
          `kernel drops ${final.kernelDrops}, queue drops ${final.queueDrops}, close discards ${final.closeDiscards}\n` +
          `  RSS MiB each second: ${rss.map((r) => r.mib.toFixed(0)).join(' ')}\n` +
          `  event-loop reports: ${ticks.length} in ${FLOOD_SECONDS} s; longest delay (ms) per report: ${ticks.map((t) => t.loopDelayMaxMs.toFixed(0)).join(' ')}`,
      );

      expect(final.received + final.kernelDrops + final.queueDrops + final.closeDiscards).toBe(sent.sent);
      expect(final.kernelDrops + final.queueDrops, 'the flood did not overload the reader').toBeGreaterThan(0);
      // The first seconds fill the buffers and queues; after that the RSS must stop growing (beyond
      // what the garbage collector's timing makes it wander).
      const peakRss = (from: number, to: number): number =>
        Math.max(...rss.filter((r) => r.second > from && r.second <= to).map((r) => r.mib));
      const early = peakRss(5, FLOOD_SECONDS / 2);
      expect(peakRss(FLOOD_SECONDS / 2, FLOOD_SECONDS), 'RSS grew in the second half').toBeLessThanOrEqual(early + Math.max(64, early / 5));
      // The event loop turns: a report nearly every second (a stalled second may merge into the next).
      const longest = Math.max(0, ...ticks.map((t) => t.loopDelayMaxMs));
      expect(ticks.length, `the event loop was blocked (longest delay ${longest.toFixed(0)} ms)`).toBeGreaterThanOrEqual(
        FLOOD_SECONDS * 0.8,
      );
      // And its turns do not grow longer: late no longer than twice early, or than the stall and a second.
      const peakDelay = (from: number, to: number): number =>
        Math.max(...ticks.filter((t) => t.second > from && t.second <= to).map((t) => t.loopDelayMaxMs));
      expect(peakDelay(FLOOD_SECONDS / 2, FLOOD_SECONDS), 'event-loop delay grew').toBeLessThanOrEqual(
        Math.max(2 * peakDelay(5, FLOOD_SECONDS / 2), stallMs + 1000),
      );
    } finally {
      c.stop();
    }
  }

  it('steady consumer: received + drops == sent, RSS and event-loop delay bounded', () => flood(0), (FLOOD_SECONDS + 300) * 1000);

  it(
    'consumer stalling 500 ms every second: received + drops == sent, RSS and event-loop delay bounded',
    () => flood(500),
    (FLOOD_SECONDS + 300) * 1000,
  );
});

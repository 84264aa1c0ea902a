// A flood at twice the rate the IPFIX source sustains, with exact accounting. A C sender
// (scripts/bench/ipfix-sender.c: one template, then one record per message with sequence
// numbers, as OVS sends) first floods unpaced to measure what the source takes in (each record
// rendered as decode --ipfix's JSON line), then paces at twice that for FLOOD_SECONDS and sends
// one last record after a pause. Asserted: every record sent is received or counted as a
// receive-buffer drop, exactly; the sequence numbers count the same loss; the flood really
// overloaded the source. The figures are printed for the record.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openIpfix, type IpfixSource } from '../../src/ipfix/source';
import { ipfixSampleJson } from '../../src/output/ipfix-sample-json';

const run = promisify(execFile);
const FLOOD_SECONDS = 10;
const CALIBRATION_SECONDS = 2;

let build: string;
let sender: string;

beforeAll(() => {
  build = mkdtempSync(path.join(tmpdir(), 'ovn-psample-ipfix-flood-'));
  sender = path.join(build, 'ipfix-sender');
  execFileSync('cc', ['-O2', '-o', sender, path.join(__dirname, '..', '..', 'scripts', 'bench', 'ipfix-sender.c')]);
});
afterAll(() => rmSync(build, { recursive: true, force: true }));

async function settled(source: IpfixSource, sent: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stats = source.stats();
    if (stats.received + stats.receiveBufferDrops + stats.queueDrops >= sent && stats.queued === 0) return;
    if (Date.now() > deadline) throw new Error(`not accounted: ${JSON.stringify(stats)} of ${sent}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function flood(args: string[]): Promise<{ source: IpfixSource; records: number; rate: number; bytes: number }> {
  const source = await openIpfix({ port: 0 });
  let bytes = 0;
  source.on('sample', (sample) => {
    bytes += ipfixSampleJson(sample).length;
  });
  const { stdout } = await run(sender, ['--port', String(source.port), '--tail-ms', '300', ...args]);
  const { records, rate } = JSON.parse(stdout) as { records: number; rate: number };
  await settled(source, records);
  return { source, records, rate, bytes };
}

it(`a flood at twice the sustained rate for ${FLOOD_SECONDS} s: received + receive-buffer drops == sent, exactly`, async () => {
  const calibration = await flood(['--seconds', String(CALIBRATION_SECONDS)]);
  const sustained = calibration.source.stats().received / CALIBRATION_SECONDS;
  await calibration.source[Symbol.asyncDispose]();
  expect(sustained).toBeGreaterThan(0);

  const target = Math.round(2 * sustained);
  const { source, records, rate } = await flood(['--seconds', String(FLOOD_SECONDS), '--rate', String(target)]);
  await source[Symbol.asyncDispose]();
  const stats = source.stats();
  console.log(
    `IPFIX flood: sustained ${Math.round(sustained)} records/s; flooded ${records} records at ${Math.round(rate)}/s (asked ${target}); ` +
      `received ${stats.received}, receive-buffer drops ${stats.receiveBufferDrops}, sequence gaps ${stats.sequenceLost}, queue drops ${stats.queueDrops}, ` +
      `buffer ${source.receiveBufferBytes} bytes`,
  );
  expect(stats.receiveBufferDrops).toBeGreaterThan(0);
  expect(stats.received + stats.receiveBufferDrops + stats.queueDrops).toBe(records);
  expect(stats.sequenceLost).toBe(stats.receiveBufferDrops);
  expect(stats).toMatchObject({ datagrams: records + 1 - stats.receiveBufferDrops, malformed: 0, templateLost: 0, closeDiscards: 0 });
});

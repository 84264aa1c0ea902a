// The IPFIX source's contract, as the psample socket's: typed errors at open, the allow-list,
// batches, iterators and listeners, and exact accounting when a listener closes it, when the
// sender does not wait, and when the receive buffer overflows.
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, test } from 'vitest';
import { IpfixOptionError, IpfixSocketError } from '../../src/ipfix/errors';
import { openIpfix, type IpfixDropEvent, type IpfixSource } from '../../src/ipfix/source';
import type { IpfixSample } from '../../src/ipfix/types';
import { dist, runNodeScript } from '../support/child';
import { dataSet, FLOW_FIELDS, flowRecord, message, templateSet } from './support/ipfix-writer';

const root = process.getuid?.() === 0;
const opened: (IpfixSource | Socket)[] = [];
afterEach(async () => {
  for (const thing of opened.splice(0)) {
    if ('port' in thing) await thing[Symbol.asyncDispose]();
    else thing.close();
  }
});

async function source(options: Parameters<typeof openIpfix>[0] = {}): Promise<IpfixSource> {
  const s = await openIpfix({ port: 0, ...options });
  opened.push(s);
  return s;
}

async function sender(address = '127.0.0.1'): Promise<Socket> {
  const socket = createSocket(address.includes(':') ? 'udp6' : 'udp4');
  opened.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return socket;
}

const TEMPLATE = message({ sequence: 0, domain: 1 }, [templateSet([{ id: 300, fields: FLOW_FIELDS }])]);
const record = (i: number): Buffer =>
  message({ sequence: i, domain: 1 }, [dataSet(300, [flowRecord(i, '10.0.0.1', '10.0.0.2', 6, 1000, 80)])]);

/** Sends every datagram in one go, without yielding to the event loop: they queue in the kernel. */
function burst(socket: Socket, port: number, datagrams: readonly Buffer[], address = '127.0.0.1'): void {
  for (const datagram of datagrams) socket.send(datagram, port, address);
}

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('opening', () => {
  test('binds 127.0.0.1 by default, with the port asked for (0: any free one)', async () => {
    const s = await source();
    expect(s.address).toBe('127.0.0.1');
    expect(s.port).toBeGreaterThan(0);
    expect(s.receiveDropsKnown).toBe(true);
  });

  test('a port in use: IPFIX_ADDRESS_IN_USE, saying what to do', async () => {
    const taken = await sender();
    const error = await openIpfix({ port: taken.address().port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IpfixSocketError);
    expect(error).toMatchObject({ code: 'IPFIX_ADDRESS_IN_USE', message: expect.stringContaining('another port') });
  });

  test('an address not on this host: IPFIX_BAD_ADDRESS; not an address at all: INVALID_OPTION before any socket', async () => {
    await expect(openIpfix({ address: '192.0.2.1', port: 0 })).rejects.toMatchObject({ code: 'IPFIX_BAD_ADDRESS' });
    await expect(openIpfix({ address: 'localhost' })).rejects.toBeInstanceOf(IpfixOptionError);
    await expect(openIpfix({ port: 70000 })).rejects.toBeInstanceOf(IpfixOptionError);
    await expect(openIpfix({ exporters: ['10.0.0.0/33'] })).rejects.toThrow(/neither an IP address nor a CIDR block/);
  });

  test.skipIf(!root)('a port below 1024 without CAP_NET_BIND_SERVICE: IPFIX_PERMISSION', async () => {
    const script = `
      const { openIpfix } = require(${JSON.stringify(dist)});
      openIpfix({ port: 623 }).then(
        (s) => { process.stdout.write('bound'); s.close(); },
        (e) => process.stdout.write(JSON.stringify({ code: e.code, message: e.message })),
      );
    `;
    const child = await runNodeScript(script);
    // Root may bind it; the same script as nobody may not.
    expect(child.stdout).toBe('bound');
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--inh-caps=-all', process.execPath, '-e', script],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(result.stdout)).toMatchObject({ code: 'IPFIX_PERMISSION', message: expect.stringContaining('CAP_NET_BIND_SERVICE') });
  });
});

describe('delivery', () => {
  test('records arrive as batches, samples and through iterators, in order; received counts each once', async () => {
    const s = await source();
    const batches: number[] = [];
    const seen: number[] = [];
    s.on('batch', (batch) => batches.push(batch.length));
    s.on('sample', (sample) => seen.push(sample.observationPointId!));
    const iterated: number[] = [];
    const iteration = (async () => {
      for await (const sample of s) {
        iterated.push(sample.observationPointId!);
        if (iterated.length === 50) break;
      }
    })();
    const out = await sender();
    burst(out, s.port, [TEMPLATE, ...Array.from({ length: 50 }, (_, i) => record(i))]);
    await iteration;
    await until(() => seen.length === 50, '50 samples');
    const inOrder = Array.from({ length: 50 }, (_, i) => i);
    expect(seen).toEqual(inOrder);
    expect(iterated).toEqual(inOrder);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(50);
    expect(s.stats()).toMatchObject({ datagrams: 51, records: 50, received: 50, sequenceLost: 0, queued: 0 });
  });

  test('exporters outside the allow-list are counted and never decoded', async () => {
    const s = await source({ exporters: ['127.0.0.2'] });
    const samples: IpfixSample[] = [];
    s.on('sample', (sample) => samples.push(sample));
    const stranger = await sender('127.0.0.1');
    const friend = await sender('127.0.0.2');
    burst(stranger, s.port, [TEMPLATE, record(0), record(1)]);
    burst(friend, s.port, [TEMPLATE, record(0)]);
    await until(() => s.stats().datagrams === 5, '5 datagrams');
    expect(samples.map((x) => x.exporter.address)).toEqual(['127.0.0.2']);
    expect(s.stats()).toMatchObject({ rejectedExporter: 3, templates: 1, records: 1 });
  });

  test('the default allow-list is loopback: a sender on another address of this host is refused', async () => {
    const { networkInterfaces } = await import('node:os');
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    if (other === undefined) return;
    const s = await source({ address: '0.0.0.0' });
    const out = await sender(other.address);
    burst(out, s.port, [TEMPLATE, record(0)], other.address);
    await until(() => s.stats().datagrams === 2, '2 datagrams');
    expect(s.stats()).toMatchObject({ rejectedExporter: 2, records: 0 });
  });

  test('malformed datagrams are counted and reported, never thrown', async () => {
    const s = await source();
    const reports: string[] = [];
    s.on('malformed', (m) => reports.push(m.reason));
    const out = await sender();
    burst(out, s.port, [Buffer.from('not ipfix at all'), TEMPLATE]);
    await until(() => s.stats().datagrams === 2, '2 datagrams');
    expect(reports).toEqual([expect.stringContaining('not an IPFIX message')]);
    expect(s.stats()).toMatchObject({ malformed: 1, messages: 1 });
  });
});

describe('close and loss accounting', () => {
  test('close() inside a sample listener: nothing follows, the rest is counted in closeDiscards', async () => {
    const s = await source();
    const drops: IpfixDropEvent[] = [];
    const seen: number[] = [];
    s.on('drop', (d) => drops.push(d));
    s.on('sample', (sample) => {
      seen.push(sample.observationPointId!);
      if (seen.length === 10) s.close();
    });
    const closed = new Promise<void>((resolve) => s.once('close', resolve));
    const out = await sender();
    burst(out, s.port, [TEMPLATE, ...Array.from({ length: 100 }, (_, i) => record(i))]);
    await closed;
    const stats = s.stats();
    expect(seen.length).toBe(10);
    expect(stats.received).toBe(10);
    // Every datagram sent: a message read (template, records delivered or discarded) or read while closing.
    expect(stats.datagrams).toBe(101);
    expect(stats.received + stats.closeDiscards).toBe(100);
    expect(drops.at(-1)).toMatchObject({ kind: 'close', total: stats.closeDiscards });
  });

  test('the sender that does not wait: what the kernel still holds at close() is read and counted', async () => {
    const s = await source();
    const datagrams = [TEMPLATE, ...Array.from({ length: 300 }, (_, i) => record(i))].map((b) => b.toString('hex'));
    // Another process sends while this one's event loop is blocked: at close() the kernel holds
    // every datagram (or dropped it), none read yet.
    const { spawnSync } = await import('node:child_process');
    const sent = spawnSync(
      process.execPath,
      [
        '-e',
        `const out = require('node:dgram').createSocket('udp4'); let n = 0;
         for (const hex of ${JSON.stringify(datagrams)}) out.send(Buffer.from(hex, 'hex'), ${s.port}, '127.0.0.1', () => { if (++n === ${datagrams.length}) out.close(); });`,
      ],
      { encoding: 'utf8' },
    );
    expect(sent.status, sent.stderr).toBe(0);
    await s[Symbol.asyncDispose]();
    const stats = s.stats();
    expect(stats.received).toBe(0);
    expect(stats.datagrams + stats.receiveBufferDrops).toBe(301);
    expect(stats.closeDiscards + stats.receiveBufferDrops).toBe(301);
  });

  test('a receive buffer too small for a burst: the kernel’s drops are counted, and sequence numbers agree', async () => {
    const s = await source({ receiveBufferBytes: 4096 });
    const out = await sender();
    const sent = 2000;
    burst(out, s.port, [TEMPLATE, ...Array.from({ length: sent }, (_, i) => record(i))]);
    await until(() => {
      const stats = s.stats();
      return stats.datagrams + stats.receiveBufferDrops === sent + 1;
    }, 'every datagram read or dropped');
    await until(() => s.stats().queued === 0, 'delivery');
    const stats = s.stats();
    expect(stats.receiveBufferDrops).toBeGreaterThan(0);
    expect(stats.received + stats.receiveBufferDrops).toBe(sent);
    // The records lost after the last one received are not in a gap yet.
    expect(stats.sequenceLost).toBeLessThanOrEqual(stats.receiveBufferDrops);
  });

  test('records beyond queueCapacity waiting for delivery are counted in queueDrops', async () => {
    const s = await source({ queueCapacity: 5 });
    const seen: number[] = [];
    s.on('sample', (sample) => seen.push(sample.observationPointId!));
    const out = await sender();
    burst(out, s.port, [TEMPLATE, ...Array.from({ length: 200 }, (_, i) => record(i))]);
    await until(() => s.stats().datagrams === 201, 'every datagram');
    await until(() => s.stats().queued === 0, 'delivery');
    const stats = s.stats();
    expect(stats.queueDrops).toBeGreaterThan(0);
    expect(stats.received + stats.queueDrops).toBe(200);
    expect(seen.length).toBe(stats.received);
  });

  test('an AbortSignal closes it; iterators end', async () => {
    const controller = new AbortController();
    const s = await source({ signal: controller.signal });
    const iteration = (async () => {
      const points: (number | undefined)[] = [];
      for await (const sample of s) points.push(sample.observationPointId);
      return points;
    })();
    controller.abort();
    expect(await iteration).toEqual([]);
    expect(s.closed).toBe(true);
  });
});

describe('listeners that throw', () => {
  const script = (handle: boolean): string => `
    const dgram = require('node:dgram');
    const { openIpfix } = require(${JSON.stringify(dist)});
    (async () => {
      const errors = [];
      if (${handle}) process.on('uncaughtException', (e) => errors.push(e.message));
      const s = await openIpfix({ port: 0 });
      const seen = [];
      const iterated = [];
      s.on('sample', (sample) => { seen.push(sample.observationPointId); if (seen.length === 5) throw new Error('listener failed on purpose'); });
      (async () => { for await (const sample of s) iterated.push(sample.observationPointId); })();
      const out = dgram.createSocket('udp4');
      for (const hex of ${JSON.stringify([TEMPLATE, ...Array.from({ length: 20 }, (_, i) => record(i))].map((b) => b.toString('hex')))}) out.send(Buffer.from(hex, 'hex'), s.port, '127.0.0.1');
      const deadline = Date.now() + 10000;
      const check = setInterval(() => {
        if (iterated.length < 20 && Date.now() < deadline) return;
        clearInterval(check);
        process.stdout.write(JSON.stringify({ errors, seen, iterated, stats: s.stats() }));
        s.close();
        out.close();
      }, 10);
    })();
  `;

  test('the error reaches uncaughtException; every record is still delivered, in order', async () => {
    const child = await runNodeScript(script(true));
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout) as { errors: string[]; seen: number[]; iterated: number[]; stats: { received: number } };
    const inOrder = Array.from({ length: 20 }, (_, i) => i);
    expect(out.errors).toEqual(['listener failed on purpose']);
    expect(out.seen).toEqual(inOrder);
    expect(out.iterated).toEqual(inOrder);
    expect(out.stats.received).toBe(20);
  });

  test('without a handler, the process ends with the error, as from any EventEmitter', async () => {
    const child = await runNodeScript(script(false));
    expect(child.status).toBe(1);
    expect(child.stderr).toContain('listener failed on purpose');
  });
});

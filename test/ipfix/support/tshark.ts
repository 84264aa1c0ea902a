// Wireshark's own tools as the oracle: dumpcap captures what an exporter sent on loopback, tshark's
// IPFIX (cflow) dissector reads it back, field by field.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pcapFile, type UdpDatagram } from './pcap-writer';

const run = promisify(execFile);

export const haveWiresharkTools = (): boolean => existsSync('/usr/bin/tshark') && existsSync('/usr/bin/dumpcap');

export interface Capture {
  /** Stops capturing; resolves with the pcapng file once dumpcap has written it. */
  stop(): Promise<string>;
}

/** dumpcap on lo, keeping UDP to `port` (root: it opens a packet socket). */
export async function captureLoopback(port: number, format: 'pcapng' | 'pcap' = 'pcapng'): Promise<Capture> {
  const file = join(mkdtempSync(join(tmpdir(), 'ovn-psample-capture-')), `ipfix.${format}`);
  const child = spawn('dumpcap', ['-i', 'lo', '-f', `udp port ${port}`, '-w', file, ...(format === 'pcap' ? ['-P'] : [])], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('Capturing on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`dumpcap exited with ${code}: ${stderr}`)));
  });
  return {
    async stop() {
      // dumpcap reads the kernel's capture ring on its own schedule: what the receiver already
      // has may not be written yet.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
      return file;
    },
  };
}

/** The UDP datagrams of a capture, as tshark reads them. */
export async function capturedDatagrams(file: string): Promise<UdpDatagram[]> {
  const { stdout } = await run(
    'tshark',
    ['-r', file, '-T', 'fields', '-e', 'ip.src', '-e', 'ip.dst', '-e', 'udp.srcport', '-e', 'udp.dstport', '-e', 'udp.payload'],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [src, dst, srcPort, dstPort, payload] = line.split('\t');
      return {
        src: src!,
        dst: dst!,
        srcPort: Number(srcPort),
        dstPort: Number(dstPort),
        payload: Buffer.from(payload!.replace(/:/g, ''), 'hex'),
      };
    });
}

const TEMPLATE_SET = 2;

/**
 * The datagrams with each template message of an exporter copied for every other (source port,
 * observation domain) its data comes from: what this collector assumes, keying templates by the
 * exporter's address and falling back across domains (OVS < 3.2 sends one domain's templates,
 * and a reconfigured OVS sends from a new port without sending them again). tshark keys templates
 * per port and domain, with no fallback: so it sees what the collector uses.
 */
export function withTemplatesForEveryDomain(datagrams: readonly UdpDatagram[]): UdpDatagram[] {
  const domainOf = (d: UdpDatagram): number => Buffer.from(d.payload).readUInt32BE(12);
  const firstSet = (d: UdpDatagram): number => Buffer.from(d.payload).readUInt16BE(16);
  const streams = new Map<string, Map<string, { port: number; domain: number }>>();
  for (const d of datagrams) {
    if (firstSet(d) < 256) continue;
    let seen = streams.get(d.src);
    if (seen === undefined) streams.set(d.src, (seen = new Map()));
    seen.set(`${d.srcPort}|${domainOf(d)}`, { port: d.srcPort, domain: domainOf(d) });
  }
  return datagrams.flatMap((d) => {
    if (firstSet(d) !== TEMPLATE_SET) return [d];
    const copies = [...(streams.get(d.src)?.values() ?? [])]
      .filter(({ port, domain }) => port !== d.srcPort || domain !== domainOf(d))
      .map(({ port, domain }) => {
        const payload = Buffer.from(d.payload);
        payload.writeUInt32BE(domain, 12);
        return { ...d, srcPort: port, payload };
      });
    return [d, ...copies];
  });
}

/** One IPFIX data record as tshark's cflow dissector reads it: each cflow.* field, values as strings (arrays when repeated). */
export type TsharkRecord = Record<string, string | string[]>;

function collect(node: unknown, into: TsharkRecord): void {
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key.startsWith('cflow.') && (typeof value === 'string' || Array.isArray(value))) {
      into[key] = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : value;
    }
    if (typeof value === 'object') collect(value, into);
  }
}

/** tshark's reading of every flow record (one per message, as OVS sends; options records left out) of the datagrams to `port`. */
export async function tsharkRecords(datagrams: readonly UdpDatagram[], port: number): Promise<TsharkRecord[]> {
  const file = join(mkdtempSync(join(tmpdir(), 'ovn-psample-tshark-')), 'ipfix.pcap');
  writeFileSync(file, pcapFile('ethernet', datagrams));
  const { stdout } = await run(
    'tshark',
    ['-r', file, '-d', `udp.port==${port},cflow`, '-T', 'json', '--no-duplicate-keys', '-Y', 'cflow.observation_point_id'],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const packets = JSON.parse(stdout) as { _source: { layers: { cflow: unknown } } }[];
  return packets.map((packet) => {
    const record: TsharkRecord = {};
    collect(packet._source.layers.cflow, record);
    return record;
  });
}

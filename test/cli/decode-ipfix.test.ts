// decode --ipfix FILE: captures as an operator takes them (tcpdump, dumpcap), in every link type
// and both file formats, read back the records a live source gets; tshark reads each file too,
// so the files are what Wireshark takes. With --nb/--sb, each record's cookie is decoded through OVN.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeIpfixCapture } from '../../src/cli/commands/decode';
import { decodeIpfixDatagrams } from '../../src/ipfix/decode';
import type { IpfixSample } from '../../src/ipfix/types';
import { dataSet, FLOW_FIELDS, flowRecord, message, ovsFixture, templateSet } from '../ipfix/support/ipfix-writer';
import { pcapFile, pcapngFile, type LinkType, type UdpDatagram } from '../ipfix/support/pcap-writer';
import { startOvnDatabases, type OvnDatabases } from '../ovn/support/ovn-databases';
import { cliOutput, jsonLines, runCliSync } from '../support/cli';
import { NorthboundTransaction, OVNK_SAMPLING_APP_IDS, sampleMetadataOf } from '../ovn/support/ovnk-fixtures';
import { addPaymentsFirewall, PAYMENTS_FIREWALL as firewall } from './support/payments-firewall';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'ovn-psample-decode-ipfix-'));
const PORT = 4739;

function datagrams(src: string, dst: string, payloads: readonly Buffer[], srcPorts?: readonly number[]): UdpDatagram[] {
  return payloads.map((payload, i) => ({ src, dst, srcPort: srcPorts?.[i] ?? 50000, dstPort: PORT, payload }));
}

function write(name: string, bytes: Buffer): string {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

const fixture = ovsFixture();
const expected = decodeIpfixDatagrams(
  fixture.map((d) => ({ bytes: d.bytes, exporter: { address: '127.0.0.1', port: d.port }, timeMs: 0 })),
).samples;

describe('decode --ipfix: capture formats and link types', () => {
  const cases: [LinkType, 'pcap' | 'pcapng', string, string][] = [];
  for (const linkType of ['ethernet', 'linux-sll', 'linux-sll2', 'null', 'raw'] as const) {
    for (const format of ['pcap', 'pcapng'] as const) {
      cases.push([linkType, format, '127.0.0.1', '127.0.0.1']);
    }
  }
  cases.push(['ethernet', 'pcapng', '::1', '::1'], ['linux-sll2', 'pcap', 'fd00::5', 'fd00::1']);

  it.each(cases)('%s in %s from %s: the records a live source gets, and tshark agrees', async (linkType, format, src, dst) => {
    const udp = datagrams(
      src,
      dst,
      fixture.map((d) => d.bytes),
      fixture.map((d) => d.port),
    );
    const file = write(
      `${linkType}-${src.replace(/:/g, '_')}.${format}`,
      format === 'pcap' ? pcapFile(linkType, udp) : pcapngFile(linkType, udp),
    );
    const decoded = decodeIpfixCapture(file);
    expect(decoded.stats).toMatchObject({ datagrams: fixture.length, malformed: 0, templateLost: 0 });
    const withoutExporter = (samples: readonly IpfixSample[]): unknown[] => samples.map((sample) => ({ ...sample, exporter: undefined }));
    expect(withoutExporter(decoded.samples)).toEqual(withoutExporter(expected));
    expect(decoded.samples[0]!.exporter).toEqual({ address: src, port: fixture[0]!.port });
    const { stdout } = await run('tshark', [
      '-r',
      file,
      '-d',
      `udp.port==${PORT},cflow`,
      '-T',
      'fields',
      '-e',
      'cflow.observation_point_id',
      '-Y',
      'cflow.observation_point_id',
    ]);
    expect(stdout.trim().split('\n').length).toBe(3);
  });

  it('frames that hold no UDP are counted, not decoded; UDP that is not IPFIX is counted malformed and said', () => {
    const udp = [
      ...datagrams('127.0.0.1', '127.0.0.1', [Buffer.from('a DNS answer, say')]),
      ...datagrams(
        '127.0.0.1',
        '127.0.0.1',
        fixture.map((d) => d.bytes),
      ),
    ];
    const bytes = pcapFile('ethernet', udp);
    // A truncated frame and a non-UDP frame appended by hand (ARP).
    const arp = Buffer.alloc(16 + 42);
    arp.writeUInt32LE(42, 8);
    arp.writeUInt32LE(42, 12);
    arp.writeUInt16BE(0x0806, 16 + 12);
    const file = write('mixed.pcap', Buffer.concat([bytes, arp]));
    const decoded = decodeIpfixCapture(file);
    expect(decoded.frames).toBe(fixture.length + 2);
    expect(decoded.skipped).toEqual({ 'not-udp': 1 });
    expect(decoded.stats.malformed).toBe(1);
    expect(decoded.malformed[0]!.reason).toContain('not an IPFIX message');
    const result = runCliSync(['decode', '--ipfix', file, '--format', 'text']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(4);
    expect(result.stderr).toContain('UDP datagram 1 is not IPFIX');
  });

  it('a file that is no capture, or is cut short: exit 2, nothing printed', () => {
    const notCapture = write('not.pcap', Buffer.from('hello, world'));
    const whole = pcapFile(
      'ethernet',
      datagrams(
        '127.0.0.1',
        '127.0.0.1',
        fixture.map((d) => d.bytes),
      ),
    );
    const cut = write('cut.pcap', whole.subarray(0, whole.length - 10));
    for (const [file, reason] of [
      [notCapture, 'not a capture file'],
      [cut, 'more than the file has'],
    ] as const) {
      const result = runCliSync(['decode', '--ipfix', file]);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(reason);
    }
  });

  it('the text and JSON lines', () => {
    const file = write(
      'lines.pcapng',
      pcapngFile(
        'ethernet',
        datagrams(
          '127.0.0.1',
          '127.0.0.1',
          fixture.map((d) => d.bytes),
          fixture.map((d) => d.port),
        ),
      ),
    );
    const text = cliOutput(['decode', '--ipfix', file, '--format', 'text', '--log-level', 'silent']);
    const port = fixture[0]!.port;
    expect(text.split('\n')).toEqual([
      `exporter=127.0.0.1:${port} in=p1 app=43 dp=1 point=1001 10.0.0.1:40000 > 10.0.0.2:80 TCP weight=1`,
      `exporter=127.0.0.1:${port} in=p2 app=43 dp=3 point=1003 10.0.0.2:80 > 10.0.0.1:40000 TCP weight=2`,
      `exporter=127.0.0.1:${port} in=p1 app=43 dp=1 point=1001 vlan 100 fd00::1 > fd00::2 ICMPv6 type=128 code=0 weight=1`,
      `exporter=127.0.0.1:${port} in=p1 app=43 dp=1 point=1001 50:54:00:00:00:01 > ff:ff:ff:ff:ff:ff ARP weight=1`,
      '',
    ]);
    const json = jsonLines(cliOutput(['decode', '--ipfix', file, '--log-level', 'silent']));
    expect(json[1]).toEqual({
      source: 'ipfix',
      exporter: `127.0.0.1:${port}`,
      exportTime: expected[1]!.exportTime,
      flowStartUs: expected[1]!.flowStartUs,
      sequenceNumber: expected[1]!.sequenceNumber,
      templateId: 281,
      templateDomainId: 0x2b000001,
      obsDomainId: 0x2b000003,
      obsPointId: 1003,
      ovn: { appId: 43, datapathKey: 3 },
      weight: 2,
      octets: expected[1]!.octets,
      packet: JSON.parse(JSON.stringify(expected[1]!.packet)),
    });
  });
});

describe('decode --ipfix --nb --sb: each record’s cookie through OVN', () => {
  let dbs: OvnDatabases;

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    const nb = new NorthboundTransaction();
    addPaymentsFirewall(nb);
    await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
  });

  afterAll(async () => {
    await dbs?.stop();
  });

  it('the same sentence decode --cookie gives, for json and text', () => {
    const domain = ((OVNK_SAMPLING_APP_IDS['acl-est'] << 24) | 7) >>> 0;
    const point = sampleMetadataOf(firewall);
    const payloads = [
      message({ sequence: 0, domain }, [templateSet([{ id: 300, fields: FLOW_FIELDS }])]),
      message({ sequence: 0, domain }, [dataSet(300, [flowRecord(point, '10.244.0.5', '203.0.113.9', 6, 43210, 443)])]),
    ];
    const file = write('ovn.pcapng', pcapngFile('ethernet', datagrams('127.0.0.1', '127.0.0.1', payloads)));
    const remotes = ['--nb', dbs.nb.unixRemote, '--sb', dbs.sb.unixRemote, '--log-level', 'silent'];
    const json = JSON.parse(cliOutput(['decode', '--ipfix', file, ...remotes]));
    expect(json.event).toMatchObject({
      status: 'decoded',
      app: 'acl-est',
      message: 'Dropped by egress firewall in namespace payments',
      action: 'drop',
    });
    const text = cliOutput(['decode', '--ipfix', file, '--format', 'text', ...remotes]);
    expect(text).toBe(
      `exporter=127.0.0.1:50000 app=${OVNK_SAMPLING_APP_IDS['acl-est']} dp=7 point=${point} 10.244.0.5:43210 > 203.0.113.9:443 TCP weight=1 | Dropped by egress firewall in namespace payments\n`,
    );
  });
});

// Debian 12's Open vSwitch 3.1 as a real IPFIX exporter (userspace, dummy datapath) feeding the
// source; every record cross-checked field by field against tshark's IPFIX dissector reading a
// dumpcap capture of the same datagrams. OVS 3.1.0 has the one-domain template bug, so records
// of every domain but the first decode through the template fallback.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeIpfixCapture } from '../../src/cli/commands/decode';
import { openIpfix, type IpfixSource } from '../../src/ipfix/source';
import type { IpfixSample } from '../../src/ipfix/types';
import { haveOvsVswitchd, OvsExporter } from './support/ovs-exporter';
import {
  captureLoopback,
  capturedDatagrams,
  haveWiresharkTools,
  tsharkRecords,
  withTemplatesForEveryDomain,
  type TsharkRecord,
} from './support/tshark';

const root = process.getuid?.() === 0;
const D1 = 0x2b000001;
const D2 = 0x2b000002;
const D3 = 0x2b000003;
const D4 = 0x2b000004;

const ETH_IN = 'eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02)';
const ETH_BACK = 'eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01)';

/** The packets injected, each in OVS's datapath flow syntax, with the port it enters by. */
const PACKETS: readonly (readonly [string, string])[] = [
  ['p1', `in_port(1),${ETH_IN},eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0x28,ttl=64,frag=no),tcp(src=40000,dst=80)`],
  [
    'p1',
    `in_port(1),${ETH_IN},eth_type(0x86dd),ipv6(src=fd00::1,dst=fd00::2,label=5,proto=17,tclass=0,hlimit=63,frag=no),udp(src=5353,dst=53)`,
  ],
  [
    'p1',
    `in_port(1),${ETH_IN},eth_type(0x8100),vlan(vid=100,pcp=3),encap(eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=62,frag=no),icmp(type=8,code=0))`,
  ],
  [
    'p1',
    `in_port(1),${ETH_IN},eth_type(0x8100),vlan(vid=200,pcp=0),encap(eth_type(0x86dd),ipv6(src=fd00::1,dst=fd00::2,label=0,proto=58,tclass=0,hlimit=255,frag=no),icmpv6(type=128,code=0))`,
  ],
  [
    'p1',
    'in_port(1),eth(src=50:54:00:00:00:01,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.0.1,tip=10.0.0.2,op=1,sha=50:54:00:00:00:01,tha=00:00:00:00:00:00)',
  ],
  // Domain 2 (another datapath): no template of its own from OVS 3.1.
  ['p1', `in_port(1),${ETH_IN},eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.9,proto=17,tos=0,ttl=64,frag=no),udp(src=7,dst=7)`],
  // Domain 4: from the Geneve tunnel, decapsulated by the userspace datapath.
  ['p0', OvsExporter.genevePacket()],
];
/** Sampled on egress in domain 3 at probability 50 %: each sampled one stands for 2 packets. */
const HALF_SAMPLED = `in_port(2),${ETH_BACK},eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.1,proto=6,tos=0,ttl=64,frag=no),tcp(src=80,dst=40000)`;

const maybe = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
const numberField = (record: TsharkRecord, field: string): number | undefined => {
  const value = maybe(record[field]);
  return value === undefined ? undefined : Number(value);
};

const ipText = (hex: string): string =>
  hex
    .split(':')
    .map((byte) => Number.parseInt(byte, 16))
    .join('.');
const hexNumber = (hex: string): number => Number.parseInt(hex.replace(/:/g, ''), 16);

/**
 * tshark 4.0 shows VMware's tunnel elements (PEN 6876) as raw enterprise entries, in template
 * order: OVS sends source, destination, protocol, source port, destination port, type, key.
 */
function tunnelFromTshark(record: TsharkRecord): Record<string, unknown> | undefined {
  const entries = record['cflow.enterprise_private_entry'];
  if (!Array.isArray(entries) || entries.length !== 7) return undefined;
  const [src, dst, protocol, srcPort, dstPort, type, key] = entries as [string, string, string, string, string, string, string];
  return {
    src: ipText(src),
    dst: ipText(dst),
    protocol: hexNumber(protocol),
    srcPort: hexNumber(srcPort),
    dstPort: hexNumber(dstPort),
    type: hexNumber(type),
    ...(hexNumber(type) === 7 ? { typeName: 'geneve' } : {}),
    key: Uint8Array.from(key.split(':').map((byte) => Number.parseInt(byte, 16))),
  };
}

/** What tshark says of a record, in the shape of IpfixSample (the fields both read). */
function fromTshark(record: TsharkRecord): Record<string, unknown> {
  const names = record['cflow.if_name'];
  const packet: Record<string, unknown> = {
    direction: numberField(record, 'cflow.direction') === 1 ? 'egress' : 'ingress',
    srcMac: maybe(record['cflow.srcmac']),
    dstMac: maybe(record['cflow.dstmac'] ?? record['cflow.post_dstmac']),
    etherType: numberField(record, 'cflow.ethernet_type'),
    vlanId: numberField(record, 'cflow.vlanid'),
    vlanPriority: numberField(record, 'cflow.dot1q_priority'),
    ipVersion: numberField(record, 'cflow.ip_version'),
    ttl: numberField(record, 'cflow.ip_ttl'),
    protocol: numberField(record, 'cflow.protocol'),
    dscp: numberField(record, 'cflow.ip_dscp'),
    src: maybe(record['cflow.srcaddr'] ?? record['cflow.srcaddrv6']),
    dst: maybe(record['cflow.dstaddr'] ?? record['cflow.dstaddrv6']),
    flowLabel: numberField(record, 'cflow.ipv6flowlabel'),
    srcPort: numberField(record, 'cflow.srcport'),
    dstPort: numberField(record, 'cflow.dstport'),
    icmpType: numberField(record, 'cflow.icmp_ipv4_type') ?? numberField(record, 'cflow.icmp_ipv6_type'),
    icmpCode: numberField(record, 'cflow.icmp_ipv4_code') ?? numberField(record, 'cflow.icmp_ipv6_code'),
    ingressInterface: numberField(record, 'cflow.inputint'),
    ingressInterfaceName: Array.isArray(names) ? names[0] : names,
    egressInterface: numberField(record, 'cflow.outputint'),
    egressInterfaceName: Array.isArray(names) ? names[1] : undefined,
    tunnel: tunnelFromTshark(record),
  };
  return {
    observationDomainId: numberField(record, 'cflow.od_id'),
    observationPointId: numberField(record, 'cflow.observation_point_id'),
    sequenceNumber: numberField(record, 'cflow.sequence'),
    exportTime: numberField(record, 'cflow.exporttime'),
    weight: numberField(record, 'cflow.packets'),
    octets: numberField(record, 'cflow.octets'),
    packet: Object.fromEntries(Object.entries(packet).filter(([, value]) => value !== undefined)),
  };
}

function comparable(sample: IpfixSample): Record<string, unknown> {
  const { observationDomainId, observationPointId, sequenceNumber, exportTime, weight, octets, packet } = sample;
  return { observationDomainId, observationPointId, sequenceNumber, exportTime, weight, octets, packet };
}

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!root || !haveOvsVswitchd() || !haveWiresharkTools())('OVS 3.1 as a real IPFIX exporter', () => {
  let ovs: OvsExporter;
  let source: IpfixSource;
  let other: Socket;
  const samples: IpfixSample[] = [];
  let tshark: TsharkRecord[] = [];
  let halfSent = 0;
  let halfSampled = 0;
  let portsSeen = new Set<number>();
  let captureFile = '';

  beforeAll(async () => {
    ovs = await OvsExporter.start();
    source = await openIpfix({ port: 0 });
    source.on('sample', (sample) => samples.push(sample));
    const capture = await captureLoopback(source.port);
    await ovs.exportTo(`127.0.0.1:${source.port}`);
    await ovs.addSampleFlow({ inPort: 1, domain: D1, point: 1001, output: 2 });
    await ovs.addSampleFlow({ inPort: 1, match: 'ip,nw_dst=10.0.0.9', priority: 20, domain: D2, point: 1002, output: 2 });
    await ovs.addSampleFlow({ inPort: 2, domain: D3, point: 1003, probability: 32767, egress: true, output: 1 });
    await ovs.addGenevePort();
    await ovs.addSampleFlow({ inPort: 3, domain: D4, point: 1004, output: 2 });
    for (const [port, packet] of PACKETS) await ovs.receive(port, packet);
    await until(() => samples.length === PACKETS.length, `${PACKETS.length} records`);
    // A reconfiguration: OVS keeps the exporter (its templates, its sequence) and sends from a new port.
    other = createSocket('udp4');
    await new Promise<void>((resolve) => other.bind(0, '127.0.0.1', resolve));
    await ovs.retarget(`127.0.0.1:${source.port}", "127.0.0.1:${other.address().port}`);
    for (let i = 0; i < 40; i++) {
      const before = samples.length;
      await ovs.receive('p2', HALF_SAMPLED);
      halfSent++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (samples.length > before) halfSampled++;
      if (halfSampled >= 3 && halfSent - halfSampled >= 3) break;
    }
    await ovs.receive('p1', PACKETS[0]![1]);
    await until(() => samples.length === PACKETS.length + halfSampled + 1, 'the records after the reconfiguration');
    captureFile = await capture.stop();
    const datagrams = await capturedDatagrams(captureFile);
    portsSeen = new Set(datagrams.map((d) => d.srcPort));
    tshark = await tsharkRecords(withTemplatesForEveryDomain(datagrams), source.port);
  }, 120_000);

  afterAll(async () => {
    await source?.[Symbol.asyncDispose]();
    other?.close();
    await ovs?.stop();
  });

  test('every record matches tshark field by field', () => {
    expect(tshark.length).toBe(samples.length);
    samples.forEach((sample, i) => expect(comparable(sample), `record ${i}`).toEqual(fromTshark(tshark[i]!)));
  });

  test('decode --ipfix of the operator’s capture (dumpcap, pcapng) gives the records the live source got', () => {
    const decoded = decodeIpfixCapture(captureFile);
    expect(decoded.samples).toEqual(samples);
    expect(decoded.stats).toMatchObject({ malformed: 0, templateLost: 0, sequenceLost: 0, templateFallback: 2 + halfSampled });
  });

  test('the cookie: the header domain and observationPointId', () => {
    expect(samples.map((s) => [s.observationDomainId, s.observationPointId])).toEqual([
      ...PACKETS.slice(0, 5).map(() => [D1, 1001]),
      [D2, 1002],
      [D4, 1004],
      ...Array.from({ length: halfSampled }, () => [D3, 1003]),
      [D1, 1001],
    ]);
  });

  test('IPv4, IPv6, VLAN, ICMP, ARP: the templates OVS picks, and their fields', () => {
    const [tcp, udp6, vlanIcmp, vlanIcmp6, arp] = samples;
    expect(tcp!.templateId).toBe(256 + 20 + 4);
    expect(tcp!.packet).toMatchObject({
      direction: 'ingress',
      srcMac: '50:54:00:00:00:01',
      dstMac: '50:54:00:00:00:02',
      etherType: 0x0800,
      ipVersion: 4,
      ttl: 64,
      protocol: 6,
      dscp: 10,
      src: '10.0.0.1',
      dst: '10.0.0.2',
      srcPort: 40000,
      dstPort: 80,
      ingressInterfaceName: 'p1',
    });
    expect(udp6!.templateId).toBe(256 + 40 + 8);
    expect(udp6!.packet).toMatchObject({ ipVersion: 6, src: 'fd00::1', dst: 'fd00::2', flowLabel: 5, ttl: 63, srcPort: 5353, dstPort: 53 });
    expect(vlanIcmp!.templateId).toBe(256 + 60 + 20 + 16);
    expect(vlanIcmp!.packet).toMatchObject({ vlanId: 100, vlanPriority: 3, etherType: 0x0800, protocol: 1, icmpType: 8, icmpCode: 0 });
    expect(vlanIcmp6!.packet).toMatchObject({ vlanId: 200, ipVersion: 6, protocol: 58, icmpType: 128, ttl: 255 });
    expect(arp!.templateId).toBe(256);
    expect(arp!.packet).toEqual({
      direction: 'ingress',
      srcMac: '50:54:00:00:00:01',
      dstMac: 'ff:ff:ff:ff:ff:ff',
      etherType: 0x0806,
      ingressInterface: 0,
      ingressInterfaceName: 'p1',
    });
  });

  test('several domains: records without a template of their own decode with the first domain’s (OVS < 3.2)', () => {
    expect(samples[5]!.templateDomainId).toBe(D1);
    expect(samples[0]!.templateDomainId).toBeUndefined();
    const stats = source.stats();
    expect(stats.templateFallback).toBe(2 + halfSampled);
    expect(stats.templateMissing).toBe(0);
  });

  test('from a Geneve tunnel: the tunnel template and its endpoints, ports, type and key (VNI)', () => {
    const tunnelled = samples[6]!;
    expect(tunnelled.templateId).toBe(256 + 20 + 8 + 2);
    expect(tunnelled.packet).toMatchObject({
      src: '10.0.0.3',
      dst: '10.0.0.2',
      srcPort: 1000,
      dstPort: 2000,
      ingressInterfaceName: 'gnv0',
    });
    expect(tunnelled.packet.tunnel).toEqual({
      type: 7,
      typeName: 'geneve',
      key: Uint8Array.from([0, 0, 6]),
      src: '1.1.1.2',
      dst: '2.2.2.3',
      protocol: 0,
      srcPort: 50000,
      dstPort: 6081,
    });
  });

  test('egress template, probability 50 %: the weight is the estimate 65535 / 32767', () => {
    const egress = samples.filter((s) => s.observationDomainId === D3);
    expect(egress.length).toBe(halfSampled);
    for (const sample of egress) {
      expect(sample.templateId).toBe(256 + 20 + 4 + 1);
      expect(sample.weight).toBe(2);
      // The sample action comes before the output: OVS knows no egress port yet (interface 0, an empty name).
      expect(sample.packet).toMatchObject({ direction: 'egress', ingressInterfaceName: 'p2', egressInterface: 0 });
      expect(sample.packet.egressInterfaceName).toBeUndefined();
    }
    expect(halfSent).toBeGreaterThan(halfSampled);
  });

  test('a new source port after the reconfiguration: the templates hold, no loss is counted', () => {
    expect(portsSeen.size).toBe(2);
    const last = samples.at(-1)!;
    expect(last.exporter.port).not.toBe(samples[0]!.exporter.port);
    expect(last.templateDomainId).toBeUndefined();
    const stats = source.stats();
    expect(stats).toMatchObject({
      malformed: 0,
      sequenceLost: 0,
      sequenceDisorder: 0,
      templateLost: 0,
      rejectedExporter: 0,
      exporterNotSent: 0,
    });
    expect(stats.records).toBe(samples.length);
    expect(stats.received).toBe(samples.length);
    expect(stats.optionsRecords).toBeGreaterThanOrEqual(1);
  });
});

// Cross-checks the decoder against Wireshark's dissectors: every test frame goes into a pcap,
// tshark dissects it, and each field the decoder reports must match tshark's reading.
// Needs tshark (Debian: apt-get install tshark).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodePacket } from '../../src/packet/index.js';
import type { DecodedPacket, TcpFlag } from '../../src/packet/index.js';
import { capturedFrames, craftedFrames, type TestFrame } from './packet-frames.js';

const LINKTYPE_ETHERNET = 1;
const LINKTYPE_RAW = 101;
const TCP_FLAG_BITS: Readonly<Record<TcpFlag, number>> = { FIN: 1, SYN: 2, RST: 4, PSH: 8, ACK: 16, URG: 32, ECE: 64, CWR: 128 };
const EXTENSION_LAYERS = {
  'hop-by-hop': 'ipv6.hopopts',
  routing: 'ipv6.routing',
  fragment: 'ipv6.fraghdr',
  'destination-options': 'ipv6.dstopts',
  authentication: 'ah',
} as const;
const TARGET_FIELDS: Readonly<Record<number, string>> = {
  135: 'icmpv6.nd.ns.target_address',
  136: 'icmpv6.nd.na.target_address',
  137: 'icmpv6.nd.rd.target_address',
};
/** Layers the decoder reads: tshark finding one where the decoder stopped would be a miss. */
const DECODABLE_LAYERS = new Set([
  'eth',
  'vlan',
  'ieee8021ad',
  'arp',
  'ip',
  'ipv6',
  'tcp',
  'udp',
  'sctp',
  'icmp',
  'icmpv6',
  ...Object.values(EXTENSION_LAYERS),
]);

function pcap(linkType: number, frames: readonly TestFrame[]): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(linkType, 20);
  const records = frames.flatMap((frame) => {
    const record = Buffer.alloc(16);
    record.writeUInt32LE(frame.bytes.length, 8);
    record.writeUInt32LE(frame.bytes.length, 12);
    return [record, Buffer.from(frame.bytes)];
  });
  return Buffer.concat([header, ...records]);
}

/** Every field of one dissected frame, by name, each value in dissection order (outer first). */
type FieldValues = Map<string, string[]>;

function collectFields(node: unknown, fields: FieldValues): FieldValues {
  if (node === null || typeof node !== 'object') return fields;
  for (const [key, value] of Object.entries(node)) {
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (typeof item === 'string') {
        const list = fields.get(key) ?? [];
        list.push(item);
        fields.set(key, list);
      } else {
        collectFields(item, fields);
      }
    }
  }
  return fields;
}

interface Dissection {
  fields: FieldValues;
  layers: string[];
}

function dissect(directory: string, linkType: number, frames: readonly TestFrame[]): Dissection[] {
  const file = join(directory, `frames-${linkType}.pcap`);
  writeFileSync(file, pcap(linkType, frames));
  const json = execFileSync(
    'tshark',
    ['-r', file, '-T', 'json', '--no-duplicate-keys', '-o', 'ip.defragment:FALSE', '-o', 'ipv6.defragment:FALSE'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const packets = JSON.parse(json) as Array<{ _source: { layers: Record<string, unknown> } }>;
  return packets.map((packet) => {
    const fields = collectFields(packet._source.layers, new Map());
    const protocols = fields.get('frame.protocols')?.[0] ?? '';
    return { fields, layers: protocols.split(':').filter((layer) => layer !== 'ethertype' && layer !== 'raw') };
  });
}

const hex = (value: number, digits: number): string => `0x${value.toString(16).padStart(digits, '0')}`;
const bit = (value: boolean): string => (value ? '1' : '0');

/** The decoder's reading in tshark's vocabulary: [field, value] pairs and the layer chain. */
function expectedFromDecoder(packet: DecodedPacket): { fields: Array<[string, string]>; layers: string[] } {
  const fields: Array<[string, string]> = [];
  const layers: string[] = [];
  if (packet.ethernet !== undefined) {
    layers.push('eth');
    fields.push(['eth.src', packet.ethernet.src], ['eth.dst', packet.ethernet.dst]);
    for (const tag of packet.ethernet.vlans) {
      const layer = tag.tpid === 0x8100 ? 'vlan' : 'ieee8021ad';
      layers.push(layer);
      fields.push([`${layer}.id`, String(tag.vid)], [`${layer}.priority`, String(tag.pcp)], [`${layer}.dei`, bit(tag.dei)]);
    }
  }
  const network = packet.network;
  if (network?.kind === 'arp') {
    layers.push('arp');
    fields.push(['arp.opcode', String(network.op)]);
    fields.push(['arp.src.hw_mac', network.senderMac ?? ''], ['arp.src.proto_ipv4', network.senderIp ?? '']);
    fields.push(['arp.dst.hw_mac', network.targetMac ?? ''], ['arp.dst.proto_ipv4', network.targetIp ?? '']);
  } else if (network?.kind === 'ipv4') {
    layers.push('ip');
    fields.push(
      ['ip.version', '4'],
      ['ip.hdr_len', String(network.ihl * 4)],
      ['ip.dsfield.dscp', String(network.dscp)],
      ['ip.dsfield.ecn', String(network.ecn)],
      ['ip.len', String(network.totalLength)],
      ['ip.id', hex(network.id, 4)],
      ['ip.flags.df', bit(network.dontFragment)],
      ['ip.flags.mf', bit(network.moreFragments)],
      ['ip.frag_offset', String(network.fragmentOffset / 8)],
      ['ip.ttl', String(network.ttl)],
      ['ip.proto', String(network.protocol)],
      ['ip.src', network.src],
      ['ip.dst', network.dst],
    );
  } else if (network?.kind === 'ipv6') {
    layers.push('ipv6');
    fields.push(
      ['ipv6.tclass.dscp', String(network.dscp)],
      ['ipv6.tclass.ecn', String(network.ecn)],
      ['ipv6.flow', hex(network.flowLabel, 6)],
      ['ipv6.plen', String(network.payloadLength)],
      ['ipv6.nxt', String(network.nextHeader)],
      ['ipv6.hlim', String(network.hopLimit)],
      ['ipv6.src', network.src],
      ['ipv6.dst', network.dst],
    );
    for (const extension of network.extensions) layers.push(EXTENSION_LAYERS[extension.name]);
    if (network.fragment !== undefined) {
      fields.push(
        ['ipv6.fraghdr.offset', String(network.fragment.offset / 8)],
        ['ipv6.fraghdr.more', bit(network.fragment.moreFragments)],
        ['ipv6.fraghdr.ident', hex(network.fragment.id, 8)],
      );
    }
  }
  const transport = packet.transport;
  switch (transport?.kind) {
    case 'tcp':
      fields.push(
        ['tcp.srcport', String(transport.srcPort)],
        ['tcp.dstport', String(transport.dstPort)],
        ['tcp.seq_raw', String(transport.seq)],
        ['tcp.ack_raw', String(transport.ack)],
        ['tcp.hdr_len', String(transport.dataOffset * 4)],
        [
          'tcp.flags',
          hex(
            transport.flags.reduce((bits, flag) => bits | TCP_FLAG_BITS[flag], 0),
            4,
          ),
        ],
        ['tcp.window_size_value', String(transport.window)],
      );
      break;
    case 'udp':
      fields.push(
        ['udp.srcport', String(transport.srcPort)],
        ['udp.dstport', String(transport.dstPort)],
        ['udp.length', String(transport.length)],
      );
      break;
    case 'sctp':
      fields.push(
        ['sctp.srcport', String(transport.srcPort)],
        ['sctp.dstport', String(transport.dstPort)],
        ['sctp.verification_tag', hex(transport.verificationTag, 8)],
      );
      break;
    case 'icmp':
      fields.push(['icmp.type', String(transport.type)], ['icmp.code', String(transport.code)]);
      if (transport.id !== undefined) fields.push(['icmp.ident', String(transport.id)], ['icmp.seq', String(transport.seq)]);
      break;
    case 'icmpv6':
      fields.push(['icmpv6.type', String(transport.type)], ['icmpv6.code', String(transport.code)]);
      if (transport.id !== undefined)
        fields.push(['icmpv6.echo.identifier', hex(transport.id, 4)], ['icmpv6.echo.sequence_number', String(transport.seq)]);
      if (transport.target !== undefined)
        fields.push([TARGET_FIELDS[transport.type] ?? 'icmpv6 target of an unexpected type', transport.target]);
      break;
    case 'ports':
    case undefined:
      break;
  }
  if (transport !== undefined) layers.push(transport.kind === 'ports' ? transport.protocol : transport.kind);
  return { fields, layers };
}

const frames: readonly TestFrame[] = [...capturedFrames(), ...craftedFrames];
const byLink = {
  ethernet: frames.filter((frame) => frame.link === 'ethernet'),
  raw: frames.filter((frame) => frame.link === 'raw'),
};

describe('decoder agrees with tshark', () => {
  let directory = '';
  const dissections = new Map<string, Dissection>();

  beforeAll(() => {
    const probe = spawnSync('tshark', ['--version'], { stdio: 'ignore' });
    if (probe.error !== undefined || probe.status !== 0) {
      throw new Error('tshark is needed for this cross-check: install it (Debian: apt-get install -y tshark)');
    }
    directory = mkdtempSync(join(tmpdir(), 'ovn-psample-tshark-'));
    for (const [link, linkType] of [
      ['ethernet', LINKTYPE_ETHERNET],
      ['raw', LINKTYPE_RAW],
    ] as const) {
      const results = dissect(directory, linkType, byLink[link]);
      expect(results).toHaveLength(byLink[link].length);
      byLink[link].forEach((frame, index) => dissections.set(frame.name, results[index] as Dissection));
    }
  });

  afterAll(() => {
    if (directory !== '') rmSync(directory, { recursive: true, force: true });
  });

  test.each(frames.map((frame) => [frame.name, frame] as const))('%s', (name, frame) => {
    const dissection = dissections.get(name);
    expect(dissection, `tshark did not dissect ${name}`).toBeDefined();
    const { fields, layers } = dissection as Dissection;
    const packet = decodePacket(frame.bytes, frame.proto);
    const expected = expectedFromDecoder(packet);

    expect(layers.slice(0, expected.layers.length), `${name}: layer chain`).toEqual(expected.layers);
    if (packet.transport === undefined) {
      const next = layers[expected.layers.length];
      expect(next !== undefined && DECODABLE_LAYERS.has(next), `${name}: tshark read a ${next} layer the decoder did not`).toBe(false);
    }

    const occurrence = new Map<string, number>();
    for (const [field, value] of expected.fields) {
      const index = occurrence.get(field) ?? 0;
      occurrence.set(field, index + 1);
      expect(fields.get(field)?.[index], `${name}: ${field}`).toBe(value);
    }
  });
});

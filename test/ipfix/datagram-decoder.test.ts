import { describe, expect, test } from 'vitest';
import { IpfixDatagramDecoder, type DatagramDecoderOptions } from '../../src/ipfix/datagram-decoder';
import { emptyIpfixStats } from '../../src/ipfix/stats';
import type { IpfixSample } from '../../src/ipfix/types';
import {
  dataSet,
  FLOW_FIELDS,
  flowRecord,
  message,
  optionsTemplateSet,
  ovsFixture,
  templateSet,
  uint,
  variable,
  withdrawalSet,
} from './support/ipfix-writer';

const OPTIONS: DatagramDecoderOptions = { templateLifetimeMs: 60_000, templateWaitMs: 5_000, pendingLimit: 100, templateFallback: true };
const EXPORTER = { address: '127.0.0.1', port: 40000 };

function decoder(options: Partial<DatagramDecoderOptions> = {}): {
  decoder: IpfixDatagramDecoder;
  samples: IpfixSample[];
  feed: (bytes: Buffer, now?: number, port?: number) => string | undefined;
} {
  const d = new IpfixDatagramDecoder({ ...OPTIONS, ...options }, emptyIpfixStats());
  const samples: IpfixSample[] = [];
  return {
    decoder: d,
    samples,
    feed: (bytes, now = 0, port = EXPORTER.port) => d.decode(bytes, { ...EXPORTER, port }, now, (s) => samples.push(s))?.message,
  };
}

const template = (domain: number, sequence = 0): Buffer => message({ sequence, domain }, [templateSet([{ id: 300, fields: FLOW_FIELDS }])]);
const flow = (domain: number, sequence: number, point = 7, templateId = 300): Buffer =>
  message({ sequence, domain }, [dataSet(templateId, [flowRecord(point, '10.0.0.1', '10.0.0.2', 6, 1234, 80, 2)])]);

describe('OVS 3.1 messages (test/fixtures/ipfix)', () => {
  test('every record decodes; the domain without templates through the fallback', () => {
    const { decoder: d, samples, feed } = decoder();
    for (const { port, bytes } of ovsFixture()) expect(feed(bytes, 0, port)).toBeUndefined();
    expect(samples.map((s) => [s.observationDomainId.toString(16), s.observationPointId, s.templateId, s.templateDomainId])).toEqual([
      ['2b000001', 1001, 280, undefined],
      ['2b000003', 1003, 281, 0x2b000001],
      ['2b000001', 1001, 372, undefined],
      ['2b000001', 1001, 256, undefined],
    ]);
    expect(samples[1]!.packet).toMatchObject({
      direction: 'egress',
      src: '10.0.0.2',
      dst: '10.0.0.1',
      srcPort: 80,
      dstPort: 40000,
      ingressInterfaceName: 'p2',
    });
    expect(samples[1]!.weight).toBe(2);
    // OVS exports a record as soon as it samples (no flow cache) and rounds the export time up
    // to the second: the flow start lies within the second before it.
    for (const sample of samples) {
      expect(sample.flowStartUs).toBeGreaterThan((sample.exportTime - 1) * 1e6);
      expect(sample.flowStartUs).toBeLessThanOrEqual(sample.exportTime * 1e6);
    }
    expect(d.stats).toMatchObject({
      datagrams: 24,
      messages: 24,
      templates: 89,
      records: 4,
      optionsRecords: 1,
      templateFallback: 1,
      malformed: 0,
      sequenceLost: 0,
    });
  });

  test('without the fallback, the other domain’s record waits for a template that never comes, and is counted lost', () => {
    const { decoder: d, samples, feed } = decoder({ templateFallback: false });
    for (const { port, bytes } of ovsFixture()) feed(bytes, 0, port);
    expect(samples.length).toBe(3);
    expect(d.stats).toMatchObject({ templateMissing: 1, pending: 1 });
    d.expire(OPTIONS.templateWaitMs);
    expect(d.stats).toMatchObject({ templateLost: 1, pending: 0 });
  });
});

describe('templates', () => {
  test('a data set before its template waits, then decodes when the template comes in time', () => {
    const { decoder: d, samples, feed } = decoder();
    feed(flow(1, 0), 0);
    expect(samples).toEqual([]);
    expect(d.stats).toMatchObject({ templateMissing: 1, pending: 1 });
    expect(d.nextDeadline).toBe(5_000);
    feed(template(1, 1), 4_000);
    expect(samples.map((s) => s.observationPointId)).toEqual([7]);
    expect(d.stats).toMatchObject({ templateLate: 1, pending: 0, templateLost: 0, records: 1 });
  });

  test('past the wait, or beyond the pending limit, it is counted lost', () => {
    const { decoder: d, feed } = decoder({ pendingLimit: 2 });
    feed(flow(1, 0), 0);
    feed(flow(1, 1), 10);
    feed(flow(1, 2), 20);
    expect(d.stats).toMatchObject({ templateMissing: 3, templateLost: 1, pending: 2 });
    d.expire(5_010);
    expect(d.stats).toMatchObject({ templateLost: 2, pending: 1 });
    expect(d.discardPending()).toBe(1);
  });

  test('a withdrawn template decodes nothing more; a withdraw-all clears the domain', () => {
    const { decoder: d, samples, feed } = decoder({ templateFallback: false });
    feed(template(1));
    feed(flow(1, 0));
    feed(message({ sequence: 1, domain: 1 }, [withdrawalSet([300])]));
    feed(flow(1, 1));
    expect(samples.length).toBe(1);
    expect(d.stats).toMatchObject({ templateWithdrawals: 1, templateMissing: 1 });
    feed(template(1, 2));
    feed(message({ sequence: 2, domain: 1 }, [withdrawalSet([2])]));
    expect(d.stats.templateWithdrawals).toBe(2);
  });

  test('a template not refreshed within its lifetime expires', () => {
    const { decoder: d, samples, feed } = decoder({ templateLifetimeMs: 1_000 });
    feed(template(1), 0);
    feed(flow(1, 0), 1_000);
    feed(flow(1, 1), 1_001);
    expect(samples.length).toBe(1);
    expect(d.stats).toMatchObject({ templatesExpired: 1, templateMissing: 1 });
  });

  test('templates are per exporter address: another exporter’s template of the same id is never used', () => {
    const { decoder: d, samples } = decoder();
    d.decode(template(1), { address: '127.0.0.2', port: 1 }, 0, (s) => samples.push(s));
    d.decode(flow(1, 0), EXPORTER, 0, (s) => samples.push(s));
    expect(samples).toEqual([]);
    expect(d.stats.templateMissing).toBe(1);
  });

  test('variable-length fields (both length forms), reduced-size integers, enterprise (VMware tunnel) fields, padding', () => {
    const { samples, feed } = decoder();
    const fields = [
      { id: 138, length: 2 },
      { id: 82, length: 0xffff },
      { id: 14, length: 4 },
      { id: 82, length: 0xffff },
      { id: 891, length: 1, enterprise: 6876 },
      { id: 892, length: 0xffff, enterprise: 6876 },
      { id: 893, length: 4, enterprise: 6876 },
      { id: 894, length: 4, enterprise: 6876 },
      { id: 897, length: 2, enterprise: 6876 },
      { id: 9999, length: 3, enterprise: 12345 },
    ];
    const longName = Array.from({ length: 300 }, () => 0x61);
    const record = Uint8Array.from([
      ...uint(513, 2),
      ...variable([0x62, 0x72, 0x2d, 0x69, 0x6e, 0x74]),
      ...uint(5, 4),
      ...variable(longName),
      7,
      ...variable([0, 0, 0x12]),
      192,
      0,
      2,
      1,
      192,
      0,
      2,
      2,
      ...uint(6081, 2),
      1,
      2,
      3,
    ]);
    feed(message({ sequence: 0, domain: 9 }, [templateSet([{ id: 400, fields }]), dataSet(400, [record, record, new Uint8Array(3)])]));
    expect(samples.length).toBe(2);
    expect(samples[0]!.observationPointId).toBe(513);
    expect(samples[0]!.weight).toBe(1);
    expect(samples[0]!.packet).toEqual({
      ingressInterfaceName: 'br-int',
      egressInterface: 5,
      egressInterfaceName: 'a'.repeat(300),
      tunnel: { type: 7, typeName: 'geneve', key: Uint8Array.from([0, 0, 0x12]), src: '192.0.2.1', dst: '192.0.2.2', dstPort: 6081 },
    });
  });
});

describe('record time', () => {
  test('the flow start is the export time less flowStartDeltaMicroseconds (158); without it, none', () => {
    const { samples, feed } = decoder();
    const timed = [{ id: 158, length: 4 }, ...FLOW_FIELDS];
    feed(
      message({ sequence: 0, domain: 1, exportTime: 1_795_000_001 }, [
        templateSet([{ id: 301, fields: timed }]),
        dataSet(301, [Uint8Array.from([...uint(250_123, 4), ...flowRecord(7, '10.0.0.1', '10.0.0.2', 6, 1234, 80)])]),
      ]),
    );
    feed(template(1, 1));
    feed(flow(1, 1));
    expect(samples.map((sample) => sample.flowStartUs)).toEqual([1_795_000_001 * 1e6 - 250_123, undefined]);
  });
});

describe('loss accounting', () => {
  test('sequence numbers per transport session: a gap counts its records, going back counts disorder', () => {
    const { decoder: d, feed } = decoder();
    feed(template(1, 10));
    feed(flow(1, 10));
    feed(flow(2, 11));
    feed(flow(1, 15));
    expect(d.stats.sequenceLost).toBe(3);
    feed(flow(1, 12));
    expect(d.stats.sequenceDisorder).toBe(1);
    feed(flow(1, 16));
    expect(d.stats.sequenceLost).toBe(3);
    // A new source port is a new session: its numbers start where they start.
    feed(flow(1, 500), 0, 40001);
    expect(d.stats.sequenceLost).toBe(3);
  });

  test('notSentPacketTotalCount: the increase of each exporting process’s running total', () => {
    const { decoder: d, feed } = decoder();
    const stats = (process: number, notSent: number, sequence: number): Buffer =>
      message({ sequence, domain: 0 }, [
        optionsTemplateSet(462, [{ id: 144, length: 4 }], [{ id: 167, length: 8 }]),
        dataSet(462, [Uint8Array.from([...uint(process, 4), ...uint(notSent, 8)])]),
      ]);
    feed(stats(4, 10, 0));
    feed(stats(4, 25, 1));
    feed(stats(5, 3, 2));
    feed(stats(4, 2, 3));
    expect(d.stats).toMatchObject({ exporterNotSent: 10 + 15 + 3 + 2, optionsRecords: 4, records: 0 });
  });

  test.each([
    ['short', Buffer.alloc(10), 'shorter than the 16-byte IPFIX message header'],
    ['NetFlow v9', Buffer.from([0, 9, ...new Array<number>(18).fill(0)]), 'NetFlow v9 is not read'],
    [
      'length lies',
      Buffer.concat([template(1).subarray(0, 2), Buffer.from([0xff, 0xff]), template(1).subarray(4)]),
      'the header says 65535 bytes',
    ],
    [
      'set runs past',
      (() => {
        const m = template(1);
        m.writeUInt16BE(0xfff, 18);
        return m;
      })(),
      'it must fit',
    ],
    [
      'template id below 256',
      message({ sequence: 0, domain: 1 }, [templateSet([{ id: 255, fields: FLOW_FIELDS }])]),
      'template ids start at 256',
    ],
    [
      'field runs past',
      (() => {
        const m = template(1);
        m.writeUInt16BE(20, 22);
        return m;
      })(),
      'runs past its set',
    ],
    ['options scope', message({ sequence: 0, domain: 1 }, [optionsTemplateSet(300, [], [{ id: 1, length: 4 }])]), 'scope fields'],
  ])('a malformed message (%s) is counted and nothing of it is used', (_, bytes, reason) => {
    const { decoder: d, feed } = decoder();
    expect(feed(bytes)).toContain(reason);
    expect(d.stats).toMatchObject({ datagrams: 1, malformed: 1, messages: 0, templates: 0 });
  });

  test('a record that runs past its set ends the set and is counted', () => {
    const { decoder: d, samples, feed } = decoder();
    const fields = [
      { id: 138, length: 4 },
      { id: 82, length: 0xffff },
    ];
    feed(
      message({ sequence: 0, domain: 1 }, [
        templateSet([{ id: 301, fields }]),
        dataSet(301, [Uint8Array.from([0, 0, 0, 1, 3, 0x61, 0x62, 0x63]), Uint8Array.from([0, 0, 0, 2, 200, 0x61])]),
      ]),
    );
    expect(samples.map((s) => s.observationPointId)).toEqual([1]);
    expect(d.stats.malformedRecords).toBe(1);
  });

  test('sets of reserved ids are skipped and counted', () => {
    const { decoder: d, feed } = decoder();
    feed(message({ sequence: 0, domain: 1 }, [{ id: 7, body: new Uint8Array(4) }]));
    expect(d.stats).toMatchObject({ messages: 1, reservedSets: 1 });
  });
});

// The human line's golden corpus (test/fixtures/human-lines/): watch's human lines as the
// TypeScript HumanFormatter wrote them before the line moved to native/render/event_human.cc,
// in TZ=America/St_Johns (half-hour offset, summer time), with and without colour:
// - every packet of the packet golden corpus (test/packet/packet-golden.ts: every tuple shape,
//   cut and mutated frames) as one psample sample each, interface names with every control
//   character, non-ASCII and astral characters and more than 40 columns, the columns widening
//   as the lines go: written per event (HumanFormatter) and per release (NativeEventLines);
// - events only a per-event writer sees: names with control characters in the chain, the
//   namespace and the endpoints; IPFIX events (no bytes: the tuple is "-"; OVS's interface name).
// HUMAN_GOLDEN=write records them again from the current implementation (review the diff: every
// changed line is a changed output).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import type { NetworkEvent } from '../../src/events/network-event';
import { decodeIpfixDatagrams } from '../../src/ipfix/decode';
import type { IpfixSample } from '../../src/ipfix/types';
import { decodePacket, encodePsample, type PsampleMessage } from '../../src/index';
import { HumanFormatter } from '../../src/output/event-human';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { packetFields } from '../../src/packet/fields';
import { decodePsampleSamples } from '../../src/psample/decode';
import type { PsampleBatch } from '../../src/psample/batch';
import { dataSet, FLOW_FIELDS, flowRecord, message, templateSet } from '../ipfix/support/ipfix-writer';
import { goldenInputs } from '../packet/packet-golden';
import { batchOf } from '../events/support/random-packets';
import { icmpEcho } from '../cli/support/frames';
import { CONTROLS_BUT_TAB, HOSTILE_INTERFACE_NAMES, humanLinesPerEvent, humanLinesPerRelease } from './support/watch-lines-harness';

const GOLDEN = join(__dirname, '..', 'fixtures', 'human-lines');
const PACKETS_GOLDEN = join(GOLDEN, 'packets.txt.gz');
const EVENTS_GOLDEN = join(GOLDEN, 'events.txt');

const T0 = 1_750_000_000_123_456_789n;
const HOSTILE = `deny-all\nFAKE line ALLOW\r\u001b[2J\u001b[31mred${CONTROLS_BUT_TAB}\u007f\tend`;
const NAMES: readonly (string | undefined)[] = [...HOSTILE_INTERFACE_NAMES, 'eth0'];
const interfaceName = (ifindex: number): string | undefined => NAMES[ifindex % NAMES.length];

const savedTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'America/St_Johns';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

/** The corpus's packets, one sample each, 64 to a batch, ~37 ms apart; every other from 100 s before summer time ended in St_Johns (04:30 UTC, 2 November 2025): the clock crosses seconds and the hour that happens twice. */
function packetBatches(): PsampleBatch[] {
  const messages: Partial<PsampleMessage>[] = goldenInputs().map(({ proto, bytes }, i) => ({
    group: 7,
    iifindex: i % 5,
    proto,
    data: bytes,
    timestampNs: (i % 2 === 0 ? T0 : 1_762_057_700_000_000_000n) + BigInt(i) * 37_123_457n,
    ...(i % 3 === 0 ? {} : { userCookie: Uint8Array.from([0x02, 0, 0, i & 1, 0, 0, 0, i % 7]) }),
  }));
  const batches: PsampleBatch[] = [];
  for (let at = 0; at < messages.length; at += 64) batches.push(batchOf(messages.slice(at, at + 64)));
  return batches;
}

const perEvent = (batches: readonly PsampleBatch[], color: boolean): string => humanLinesPerEvent(batches, color, interfaceName);
const perRelease = (batches: readonly PsampleBatch[], color: boolean): string => humanLinesPerRelease(batches, color, interfaceName);

/** An event whose every database text is hostile (as the decoder and the pod directory would hand them on). */
function hostileEvent(verdict: 'drop' | 'allow' | 'pass' | 'reject' | 'unknown'): NetworkEvent {
  const data = icmpEcho({ src: '10.244.0.6', dst: '10.244.0.4', seq: 1 });
  const [sample] = decodePsampleSamples(
    encodePsample({ group: 42, proto: 0x800, data, userCookie: Uint8Array.from(Buffer.from('0200000100000064', 'hex')) }),
  );
  const event = {
    status: 'decoded',
    message: `Dropped by network policy ${HOSTILE}`,
    owner: { namespace: `ns${HOSTILE}` },
  } as unknown as OvnSampleEvent;
  return {
    timestampNs: T0,
    group: 42,
    iifindex: 1,
    fields: packetFields(data, 0x800),
    packet: decodePacket(data, 0x800),
    src: { kind: 'pod', namespace: `shop${HOSTILE}`, name: 'client🚀', network: 'default', port: 'shop_client' },
    dst: { kind: 'node', ip: '10.244.0.4', node: `node→${HOSTILE}` },
    verdict,
    chain: [
      {
        verdict,
        text: `Dropped by network policy ${HOSTILE}`,
        policy: `np:${HOSTILE}`,
        event,
        cookie: { obsDomainId: 0x02000001, obsPointId: 100 },
        samples: 1,
      },
    ],
    samples: [sample!],
  } as unknown as NetworkEvent;
}

function ipfixEvents(): NetworkEvent[] {
  const flows: Parameters<typeof flowRecord>[] = [
    [1012, '10.244.0.6', '10.244.0.4', 6, 40000, 8080],
    [2024, '10.244.0.7', '10.96.0.10', 17, 53000, 53, 4],
  ];
  const datagrams = flows.map((flow, i) =>
    message({ sequence: i, domain: 0x2b000003 }, [
      ...(i === 0 ? [templateSet([{ id: 256, fields: FLOW_FIELDS }])] : []),
      dataSet(256, [flowRecord(...flow)]),
    ]),
  );
  const samples = decodeIpfixDatagrams(
    datagrams.map((bytes) => ({ bytes, exporter: { address: '127.0.0.1', port: 50000 }, timeMs: 0 })),
  ).samples;
  // OVS names the input interface when its template has the element: the second does, hostile.
  // A flow start gives the record its own time (without it, the arrival time stands in).
  const named: IpfixSample[] = [
    { ...samples[0]!, flowStartUs: 1_795_000_000_654_321 },
    {
      ...samples[1]!,
      flowStartUs: 1_795_000_001_000_001,
      packet: { ...samples[1]!.packet, ingressInterfaceName: `ovn-k8s-mp0${HOSTILE}` },
    },
  ];
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  const events: NetworkEvent[] = [];
  assembler.on('event', (event) => events.push(event));
  assembler.pushIpfix(named);
  assembler.close();
  return events;
}

function eventLines(): string {
  let text = '';
  for (const color of [false, true]) {
    const formatter = new HumanFormatter(color, interfaceName);
    for (const verdict of ['drop', 'allow', 'pass', 'reject', 'unknown'] as const) text += formatter.format(hostileEvent(verdict));
    for (const event of ipfixEvents()) text += formatter.format(event);
  }
  return text;
}

const packetsText = (batches: readonly PsampleBatch[], write: typeof perEvent): string => write(batches, false) + write(batches, true);

if (process.env.HUMAN_GOLDEN === 'write') {
  process.env.TZ = 'America/St_Johns';
  writeFileSync(PACKETS_GOLDEN, gzipSync(packetsText(packetBatches(), perEvent), { level: 9 }));
  writeFileSync(EVENTS_GOLDEN, eventLines());
}

describe('human line golden corpus', () => {
  const golden = gunzipSync(readFileSync(PACKETS_GOLDEN)).toString('utf8');

  it('every golden packet, per event: the recorded lines, byte for byte', () => {
    const batches = packetBatches();
    expect(golden.split('\n').length - 1).toBe(2 * goldenInputs().length);
    expect(packetsText(batches, perEvent)).toBe(golden);
  });

  it('every golden packet, per release (NativeEventLines): the recorded lines, byte for byte', () => {
    expect(packetsText(packetBatches(), perRelease)).toBe(golden);
  });

  it('hostile names in every database text and IPFIX events: the recorded lines, byte for byte', () => {
    expect(eventLines()).toBe(readFileSync(EVENTS_GOLDEN, 'utf8'));
  });
});

// The inputs of the sample JSON golden lines (test/fixtures/sample-json/golden.tsv): the real
// captures and hand-made messages with every optional attribute and shape of cookie, group
// events, a sample from a peer namespace, one packet sampled three times, each with every event
// of `goldenEvents`. Deterministic: the same list on every run.
import { encodePsample, type PsampleMessage } from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { RECORD, RECORD_FLAGS } from '../../src/native/abi.generated';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { PsampleBatch } from '../../src/psample/batch';
import type { PsampleSample } from '../../src/psample/sample';
import { statValues } from '../../src/psample/stats';
import { everyAttributeSample, vectors } from '../support/fixtures';
import { craftedFrames } from '../packet/packet-frames';

export interface GoldenMessage {
  name: string;
  /** One psample netlink message, as the kernel sends it. */
  datagram: Uint8Array;
  /** The peer namespace id listenAllNsid would give it. */
  nsid?: number;
}

/** An event shaped like the decoder's, without its message. */
export const baseEvent = {
  status: 'decoded',
  reason: undefined,
  obsDomainId: 0x2b000003,
  obsPointId: 1012,
  appId: 43,
  app: 'acl-est',
  action: 'allow-related',
  owner: undefined,
  acl: undefined,
  otherAcls: undefined,
  flow: undefined,
  datapath: { key: 3, switch: 'node-1' },
  previous: undefined,
};

/** undefined (no decoder), then events shaped like the decoder's: plain ASCII, every kind of escape and non-ASCII, long. */
export const goldenEvents: readonly (OvnSampleEvent | undefined)[] = [
  undefined,
  Object.freeze({ ...baseEvent, message: 'Allowed by network policy "web" in namespace shop' }) as OvnSampleEvent,
  Object.freeze({
    ...baseEvent,
    message: 'ünïcödé 🚀, a tab\there, a \\ backslash, a "quote", \u2028 a line separator, \u0001 a control and a lone \ud800 surrogate',
    datapath: Object.freeze({ key: 7, switch: 'nœud-1' }),
  }) as OvnSampleEvent,
  Object.freeze({ ...baseEvent, status: 'stale', reason: 'acl-not-found', message: 'ü'.repeat(300) }) as OvnSampleEvent,
];

const datagram = (message: Partial<PsampleMessage>): Uint8Array => encodePsample(message);
const ovsCookie = (domain: number, point: number): Uint8Array => {
  const cookie = new Uint8Array(8);
  new DataView(cookie.buffer).setUint32(0, domain);
  new DataView(cookie.buffer).setUint32(4, point);
  return cookie;
};
const tcpFrame = craftedFrames.find((f) => f.proto === 0x0800 && f.bytes.byteLength > 40)!;

export function goldenMessages(): GoldenMessage[] {
  const every = everyAttributeSample;
  return [
    ...vectors().map((v) => ({ name: `capture:${v.name}`, datagram: v.bytes })),
    { name: 'every-attribute', datagram: datagram(every) },
    { name: 'ovs-cookie-no-tunnel', datagram: datagram({ ...every, userCookie: ovsCookie(0x2b000003, 1012), tunnel: undefined }) },
    { name: 'ovs-cookie-top-bits', datagram: datagram({ ...every, userCookie: ovsCookie(0xffffffff, 0xffffffff), tunnel: undefined }) },
    {
      name: 'short-cookie',
      datagram: datagram({ group: 1, proto: 0x0800, data: tcpFrame.bytes, userCookie: Uint8Array.of(0xab, 0xcd, 0xef) }),
    },
    { name: 'no-cookie-no-data', datagram: datagram({ group: 2, proto: 0 }) },
    { name: 'probability', datagram: datagram({ group: 3, rate: 0xffffffff, probability: true, proto: 0x0800, data: tcpFrame.bytes }) },
    {
      name: 'tunnel-ipv6-no-id',
      datagram: datagram({
        ...every,
        tunnel: {
          ipv6Src: '::ffff:c000:201',
          ipv6Dst: '2001:db8:0:0:1:0:0:1',
          dontFragment: false,
          csum: false,
          oam: true,
          ipv4InfoBridge: false,
          geneveOptions: new Uint8Array(0),
        },
      }),
    },
    {
      name: 'tunnel-vxlan',
      datagram: datagram({
        ...every,
        tunnel: {
          id: 0n,
          ipv4Src: '0.0.0.0',
          ttl: 0,
          tpDst: 4789,
          vxlanGbp: 0,
          dontFragment: true,
          csum: false,
          oam: false,
          ipv4InfoBridge: false,
        },
      }),
    },
    { name: 'nsid', datagram: datagram({ ...every, tunnel: undefined, userCookie: ovsCookie(0x02000005, 100) }), nsid: 7 },
    { name: 'nsid-negative', datagram: datagram({ group: 4, proto: 0x0800, data: tcpFrame.bytes }), nsid: -1 },
    { name: 'new-group', datagram: datagram({ command: 'new-group', group: 10, groupRefcount: 1 }) },
    { name: 'del-group', datagram: datagram({ command: 'del-group', group: 10, groupRefcount: 0 }) },
    ...[0, 1, 2].map((stage) => ({
      name: `one-packet-stage-${stage}`,
      datagram: datagram({ group: 42, proto: 0x0800, data: tcpFrame.bytes, userCookie: ovsCookie(0x02000005 + stage, 100) }),
    })),
  ];
}

/**
 * One batch of the messages, as the reader thread hands it over: the records addon.decode()
 * writes, with the nsid listenAllNsid would add (decode() has no peer namespace to give).
 */
export function goldenBatch(messages: readonly GoldenMessage[]): PsampleBatch {
  const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => m.datagram)), 0, statValues());
  if (count !== messages.length) throw new Error(`decoded ${count} records of ${messages.length} messages`);
  const view = new DataView(buffer);
  for (let i = 0, at = 0; i < count; i++, at += view.getUint32(at + RECORD.length, NATIVE_LITTLE_ENDIAN)) {
    const nsid = messages[i]!.nsid;
    if (nsid === undefined) continue;
    view.setUint32(
      at + RECORD.kindCmdFlags,
      view.getUint32(at + RECORD.kindCmdFlags, NATIVE_LITTLE_ENDIAN) | RECORD_FLAGS.nsid,
      NATIVE_LITTLE_ENDIAN,
    );
    view.setInt32(at + RECORD.nsid, nsid, NATIVE_LITTLE_ENDIAN);
  }
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
}

export function goldenSamples(messages: readonly GoldenMessage[]): PsampleSample[] {
  return [...goldenBatch(messages)];
}

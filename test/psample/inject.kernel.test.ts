import { afterEach, describe, expect, it } from 'vitest';

import {
  createInjector,
  decodePsample,
  encodePsample,
  openPsample,
  type PsampleInjector,
  type PsampleMessage,
  type PsampleSocket,
} from '../../src/index';
import { everyAttributeSample, vectors } from '../support/fixtures';
import { fileNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';

const GROUP = 2;
const FAMILY = 34;
const ns = fileNetns('ovnps-inject');

describe('samples injected through the kernel netlink path', () => {
  let socket: PsampleSocket | undefined;
  let injector: PsampleInjector | undefined;
  afterEach(() => {
    socket?.close();
    injector?.close();
  });

  function open(): { socket: PsampleSocket; injector: PsampleInjector } {
    socket = openPsample({ netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
    injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
    return { socket, injector };
  }

  it('delivers each real capture exactly as the offline decoder reads it', async () => {
    const { socket, injector } = open();
    const received = collectSamples(socket);
    const all = vectors();
    for (const v of all) injector.send(v.bytes);
    await waitFor(() => received.length === all.length, 10_000, 'all vectors');
    all.forEach((v, i) => expect(received[i]!.toObject()).toEqual(decodePsample(v.bytes)[0]));
    expect(received[0]?.userCookie).toEqual(Uint8Array.from(Buffer.from('2b000003000003f4', 'hex')));
    expect(socket.stats()).toMatchObject({ received: all.length, datagrams: all.length, malformed: 0, kernelDrops: 0 });
  });

  it('round-trips every attribute, including the nested tunnel, through encode, kernel and reader', async () => {
    const { socket, injector } = open();
    const received = collectSamples(socket);
    const sample = everyAttributeSample;
    injector.send(encodePsample(sample, { familyId: FAMILY }));
    await waitFor(() => received.length === 1);
    expect(received[0]!.toObject()).toEqual(sample);
  });

  it('reads several messages packed in one datagram', async () => {
    const { socket, injector } = open();
    const received = collectSamples(socket);
    const parts = [1, 2, 3].map((seq) => encodePsample({ group: 5, groupSeq: seq, proto: 0x800 }, { familyId: FAMILY }));
    injector.send(Buffer.concat(parts));
    await waitFor(() => received.length === 3);
    expect(received.map((s) => s.groupSeq)).toEqual([1, 2, 3]);
    expect(socket.stats().datagrams).toBe(1);
  });

  it('counts malformed, foreign and unknown input instead of delivering or losing it silently', async () => {
    const { socket, injector } = open();
    const received = collectSamples(socket);
    const good = encodePsample({ group: 1, groupSeq: 1 }, { familyId: FAMILY });
    injector.send(good.subarray(0, good.byteLength - 3)); // truncated: nlmsg_len says more
    injector.send(encodePsample({ group: 1 }, { familyId: FAMILY + 1 })); // another family
    const unknown = new Uint8Array(good.byteLength + 8);
    unknown.set(good);
    new DataView(unknown.buffer).setUint32(0, unknown.byteLength, true);
    new DataView(unknown.buffer).setUint16(good.byteLength, 8, true);
    new DataView(unknown.buffer).setUint16(good.byteLength + 2, 200, true); // attribute type 200
    injector.send(unknown);
    await waitFor(() => received.length === 1 && socket.stats().datagrams === 3);
    await settle();
    expect(socket.stats()).toMatchObject({ malformed: 1, foreign: 1, unknownAttributes: 1, received: 1 });
  });

  it('emits group events (NEW_GROUP / DEL_GROUP) as `group`, not as samples', async () => {
    const { socket, injector } = open();
    const samples = collectSamples(socket);
    const groups: PsampleMessage[] = [];
    socket.on('group', (g) => groups.push(g));
    injector.send(encodePsample({ command: 'new-group', group: 10, groupRefcount: 1 }, { familyId: FAMILY }));
    injector.send(encodePsample({ command: 'del-group', group: 10, groupRefcount: 0 }, { familyId: FAMILY }));
    await waitFor(() => groups.length === 2);
    expect(groups.map((g) => [g.command, g.group, g.groupRefcount])).toEqual([
      ['new-group', 10, 1],
      ['del-group', 10, 0],
    ]);
    expect(samples).toHaveLength(0);
  });
});

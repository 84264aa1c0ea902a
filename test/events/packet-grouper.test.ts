import { expect, it } from 'vitest';
import { PacketGrouper, type PendingPacket } from '../../src/events/packet-grouper';
import { portIps } from '../../src/ovn/port-addresses';
import { cidrContains, parseCidr } from '../../src/packet/cidr';
import { packetFields } from '../../src/packet/fields';

const sample = (data: number[], timestampNs: bigint, datapathKey = 1): { data: Uint8Array; timestampNs: bigint; datapathKey: number } => ({
  data: Uint8Array.from(data),
  timestampNs,
  datapathKey,
});
type Sample = ReturnType<typeof sample>;

/** A packet as the assembler keeps one: its first sample and those that joined it. */
interface Packet extends PendingPacket {
  readonly members: Sample[];
}

/** Hands each sample to the grouper the way the assembler does: joins a pending packet, or starts one. */
function push(grouper: PacketGrouper<Packet>, s: Sample): void {
  const hash = packetFields(s.data, 0x0800).hash;
  const timeNs = Number(s.timestampNs);
  const pending = grouper.find(hash, s.datapathKey, timeNs, s.data, 0, s.data.length);
  if (pending !== undefined) pending.members.push(s);
  else
    grouper.add({
      hash,
      datapathKey: s.datapathKey,
      timeNs,
      bytes: s.data,
      start: 0,
      length: s.data.length,
      deadline: 0,
      waiting: false,
      members: [s],
    });
}

it('groups the same bytes on the same datapath within the window, keeps the rest apart, in arrival order', () => {
  const groups: number[][] = [];
  const all = [sample([1, 2], 0n), sample([1, 2], 10n), sample([1, 2], 5n, 2), sample([1, 3], 0n), sample([1, 2], 2_000_000_000n)];
  const grouper = new PacketGrouper<Packet>(50, (packet) => groups.push(packet.members.map((m) => all.indexOf(m))));
  all.forEach((s) => push(grouper, s));
  grouper.flush();
  expect(groups).toEqual([[0, 1], [2], [3], [4]]);
});

it('keeps thousands of waiting packets apart, their hashes shared or not, and hands each on whole in arrival order', () => {
  const released: number[][] = [];
  const grouper = new PacketGrouper<Packet>(50, (packet) => released.push(packet.members.map((m) => (m.data[0]! << 8) | m.data[1]!)));
  // 3,000 packets waiting at once (more than the grouper's first buckets, twice over); every fourth
  // has the same hash as the others of its kind, the rest spread as FNV-1a would.
  const count = 3000;
  const hashOf = (n: number): number => (n % 4 === 0 ? 0xdeadbeef : Math.imul(n, 0x9e3779b1) >>> 0);
  const pushWithHash = (n: number): void => {
    const s = sample([n >> 8, n & 0xff], BigInt(n));
    const hash = hashOf(n);
    const pending = grouper.find(hash, s.datapathKey, Number(s.timestampNs), s.data, 0, s.data.length);
    if (pending !== undefined) pending.members.push(s);
    else grouper.add({ hash, datapathKey: 1, timeNs: n, bytes: s.data, start: 0, length: 2, deadline: 0, waiting: false, members: [s] });
  };
  for (let n = 0; n < count; n++) pushWithHash(n);
  for (let n = count - 1; n >= 0; n--) pushWithHash(n);
  grouper.flush();
  expect(released).toEqual(Array.from({ length: count }, (_, n) => [n, n]));
  // Handed on, a packet is found no more: the same bytes start a packet of their own.
  pushWithHash(7);
  grouper.flush();
  expect(released.at(-1)).toEqual([7]);
});

it('a consumer that throws loses neither the other packets nor later ones', async () => {
  const seen: number[] = [];
  const grouper = new PacketGrouper<Packet>(5, (packet) => {
    seen.push(packet.members[0]!.data[0]!);
    if (packet.members[0]!.data[0] === 1) throw new Error('consumer failed');
  });
  push(grouper, sample([1], 0n));
  push(grouper, sample([2], 0n));
  expect(() => grouper.flush()).toThrow('consumer failed');
  push(grouper, sample([3], 0n));
  await new Promise((resolve) => setTimeout(resolve, 30));
  expect(seen).toEqual([1, 2, 3]);
  grouper.close();
});

it('reads port addresses as ovn-kubernetes writes them, dynamic ones included', () => {
  expect(portIps(['0a:58:0a:f4:00:03 10.244.0.3 fd00:10:244:1::3'], undefined)).toEqual(['10.244.0.3', 'fd00:10:244:1::3']);
  expect(portIps(['dynamic'], '0a:00:00:00:00:01 192.168.0.4')).toEqual(['192.168.0.4']);
  expect(portIps(['router', 'unknown', '0a:00:00:00:00:02'], undefined)).toEqual([]);
});

it('matches addresses against IPv4 and IPv6 blocks', () => {
  expect(cidrContains(parseCidr('10.244.0.0/16')!, '10.244.7.1')).toBe(true);
  expect(cidrContains(parseCidr('10.244.0.0/16')!, '10.245.0.1')).toBe(false);
  expect(cidrContains(parseCidr('fd00:10:244:1::/64')!, 'fd00:10:244:1::17')).toBe(true);
  expect(cidrContains(parseCidr('fd00:10:244:1::/64')!, 'fd00:10:244:2::17')).toBe(false);
  expect(cidrContains(parseCidr('::ffff:10.0.0.0/120')!, '::ffff:10.0.0.9')).toBe(true);
  expect(parseCidr('10.0.0.0/33')).toBeUndefined();
  expect(parseCidr('shop/web')).toBeUndefined();
});

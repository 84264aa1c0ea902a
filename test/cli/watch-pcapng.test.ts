import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createInjector, encodePsample, type PsampleInjector } from '../../src/index';
import { fileNetns } from '../support/netns';
import { startNodeOvs, type NodeOvs } from '../ovs/support/ovs-database';
import { injectedSourceArgs, startCli, type CliProcess, type StartCliOptions } from '../support/cli';
import { icmpEcho, tcpSyn } from './support/frames';
import { cookieOf, PODS, startOvnkNodeDatabases, type OvnkNodeDatabases } from './support/ovnk-node';

const ns = fileNetns('ovnps-watch-pcapng');
const GROUP = 14;
const T0 = 1_750_000_000_123_456_789n;
let dbs: OvnkNodeDatabases;
let ovs: NodeOvs;
let injector: PsampleInjector;
const dir = mkdtempSync(join(tmpdir(), 'ovnps-pcapng-'));

beforeAll(async () => {
  [dbs, ovs] = await Promise.all([startOvnkNodeDatabases(), startNodeOvs({ psample: 'true' })]);
  // The pod's OVS port, with the ifindex ovs-vswitchd would have written.
  await ovs.writer.transact('Open_vSwitch', [
    {
      op: 'insert',
      table: 'Interface',
      'uuid-name': 'i',
      row: { name: 'vshopfrontend', ifindex: 7, external_ids: ['map', [['iface-id', 'shop_frontend']]] },
    },
    { op: 'insert', table: 'Port', 'uuid-name': 'p', row: { name: 'vshopfrontend', interfaces: ['named-uuid', 'i'] } },
    { op: 'mutate', table: 'Bridge', where: [['name', '==', 'br-int']], mutations: [['ports', 'insert', ['set', [['named-uuid', 'p']]]]] },
  ]);
  injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
});
afterAll(async () => {
  injector?.close();
  await Promise.all([dbs?.stop(), ovs?.stop()]);
});

function inject(): void {
  const denied = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq: 1 });
  const send = (data: Uint8Array, cookie: Uint8Array, at: bigint, iifindex: number): void =>
    injector.send(
      encodePsample({ group: 42, proto: 0x800, iifindex, data, userCookie: cookie, timestampNs: at, origSize: data.length + 100 }),
    );
  send(denied, cookieOf('anpPass'), T0, 9);
  send(denied, cookieOf('isolation'), T0 + 15_000n, 9);
  send(
    tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40000, dstPort: 8080 }),
    cookieOf('allowFrontend'),
    T0 + 2_000_000n,
    7,
  );
}

function tshark(file: string): string[][] {
  const fields = [
    'frame.number',
    'frame.time_epoch',
    'frame.interface_id',
    'frame.interface_name',
    'frame.len',
    'frame.cap_len',
    'ip.src',
    'ip.dst',
    'frame.comment',
  ];
  return execFileSync('tshark', ['-r', file, '-T', 'fields', '-E', 'separator=\t', ...fields.flatMap((field) => ['-e', field])], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .trimEnd()
    .split('\n')
    .map((line) => line.split('\t'));
}

/** watch until the two packets `inject()` sends, interface names from OVS, pods from OVN. */
const watchTwo = (args: readonly string[], options?: StartCliOptions): CliProcess =>
  startCli(
    injectedSourceArgs('watch', ns.name, GROUP, [
      '--group',
      '42',
      '--db',
      ovs.remote,
      '--nb',
      dbs.nb.unixRemote,
      '--sb',
      dbs.sb.unixRemote,
      '--count',
      '2',
      ...args,
    ]),
    options,
  );

const expected = [
  [
    '1',
    '1750000000.123456789',
    '0',
    'if9',
    '198',
    '98',
    '10.244.0.6',
    '10.244.0.4',
    `DROP: Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop [cookie ${Buffer.from(cookieOf('anpPass')).toString('hex')}, ${Buffer.from(cookieOf('isolation')).toString('hex')}]`,
  ],
  [
    '2',
    '1750000000.125456789',
    '1',
    'vshopfrontend',
    '154',
    '54',
    '10.244.0.3',
    '10.244.0.4',
    `ALLOW: Allowed by network policy allow-frontend in namespace shop [cookie ${Buffer.from(cookieOf('allowFrontend')).toString('hex')}]`,
  ],
];

it('--pcapng FILE: tshark reads the packets, kernel timestamps in ns, one interface per ingress ifindex (named from OVS), the chain and cookies as comments', async () => {
  const file = join(dir, 'watch.pcapng');
  const run = watchTwo(['--pcapng', file]);
  await run.listening;
  inject();
  expect(await run.exited).toBe(0);
  expect(run.stdout().trimEnd().split('\n')).toHaveLength(2); // the text still goes to stdout
  expect(tshark(file)).toEqual(expected);
});

it('--pcapng - streams pcapng on stdout (text then goes nowhere but --output)', async () => {
  const text = join(dir, 'watch.txt');
  const run = watchTwo(['--pcapng', '-', '--output', text], { binaryStdout: true });
  await run.listening;
  inject();
  expect(await run.exited).toBe(0);
  const file = join(dir, 'stdout.pcapng');
  writeFileSync(file, run.stdoutBytes());
  expect(tshark(file)).toEqual(expected);
  expect(readFileSync(text, 'utf8').trimEnd().split('\n')).toHaveLength(2);
});

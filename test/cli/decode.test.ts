import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCookieCommand, decodeWithOvn } from '../../src/cli/commands/decode';
import { DEFAULT_NB_REMOTE } from '../../src/cli/node-databases';
import { OvnCookieError, OvsdbConnectionError } from '../../src/errors';
import { formatCookieHex } from '../../src/ovn/cookie';
import { encodePsample } from '../../src/psample/encode';
import { createInjector } from '../../src/psample/injector';
import { cliOutput, runCliSync, startCli } from '../support/cli';
import { fileNetns } from '../support/netns';
import { waitFor } from '../support/receive';
import { startOvnDatabases, type OvnDatabases } from '../ovn/support/ovn-databases';
import {
  datapathBindingOp,
  DEFAULT_NETWORK_CONTROLLER,
  NorthboundTransaction,
  OVNK_SAMPLING_APP_IDS,
  sampleMetadataOf,
  udnSwitchName,
} from '../ovn/support/ovnk-fixtures';
import { addPaymentsFirewall, PAYMENTS_FIREWALL as firewall } from './support/payments-firewall';

const UDN = 'payments.vault';
const ns = fileNetns('ovnps-decode-ovn-cli');

function cookieHex(appId: number, datapathKey: number, pointId: number): string {
  return formatCookieHex({ obsDomainId: ((appId << 24) | datapathKey) >>> 0, obsPointId: pointId });
}

describe('decode --cookie wiring (decodeCookieCommand, decodeWithOvn)', () => {
  let dbs: OvnDatabases;

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    const nb = new NorthboundTransaction();
    addPaymentsFirewall(nb);
    const udnSwitch = nb.logicalSwitch({ name: udnSwitchName(UDN, 'node-a', 'layer2'), network: UDN, topology: 'layer2', role: 'primary' });
    const results = await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
    await dbs.sbWriter.transact('OVN_Southbound', [
      datapathBindingOp({ tunnelKey: 7, logicalSwitchUuid: nb.uuidOf(results, udnSwitch), name: udnSwitchName(UDN, 'node-a', 'layer2') }),
    ]);
  });

  afterAll(async () => {
    await dbs?.stop();
  });

  it('prints one JSON line with the event, ovnkube-observ message included', async () => {
    const cookie = cookieHex(OVNK_SAMPLING_APP_IDS['acl-est'], 7, sampleMetadataOf(firewall));
    const line = await decodeCookieCommand({ cookie, nb: dbs.nb.unixRemote, sb: dbs.sb.tcpRemote });
    expect(line).not.toContain('\n');
    const parsed = JSON.parse(line) as { cookie: string; event: Record<string, unknown> };
    expect(parsed.cookie).toBe(cookie);
    expect(parsed.event).toMatchObject({
      status: 'decoded',
      app: 'acl-est',
      message: 'Dropped by egress firewall in namespace payments',
      action: 'drop',
      owner: { type: 'EgressFirewall', namespace: 'payments', direction: 'Egress', controller: DEFAULT_NETWORK_CONTROLLER },
      acl: { name: 'EF:payments:3', priority: 9997, direction: 'to-lport', tier: 2 },
      datapath: { key: 7, switch: 'payments.vault_ovn_layer2_switch', network: UDN, topology: 'layer2', role: 'primary' },
    });
  });

  it('prints text led by the "OVN-K message:" line', async () => {
    const cookie = cookieHex(OVNK_SAMPLING_APP_IDS['acl-new'], 7, sampleMetadataOf(firewall));
    const text = await decodeCookieCommand({ cookie, nb: dbs.nb.tcpRemote, sb: dbs.sb.unixRemote, format: 'text' });
    const lines = text.split('\n');
    expect(lines[0]).toBe(`cookie ${cookie}`);
    expect(lines[1]).toBe('OVN-K message: Dropped by egress firewall in namespace payments');
    expect(text).toContain(
      'datapath: key 7, switch payments.vault_ovn_layer2_switch, network payments.vault, topology layer2, role primary',
    );
    expect(text).toContain('owner: EgressFirewall payments Egress');
  });

  it('decodes raw psample cookies for decode --hex, in order', async () => {
    const good = Buffer.from(cookieHex(OVNK_SAMPLING_APP_IDS['acl-new'], 7, sampleMetadataOf(firewall)), 'hex');
    const foreign = Buffer.from(cookieHex(200, 7, 1), 'hex');
    const events = await decodeWithOvn([good, foreign, new Uint8Array(16)], { nb: dbs.nb.unixRemote, sb: dbs.sb.unixRemote });
    expect(events.map((event) => [event.status, event.reason])).toEqual([
      ['decoded', undefined],
      ['unknown', 'unknown-app'],
      ['unknown', 'not-ovn-cookie'],
    ]);
  });

  it('refuses a malformed cookie before connecting anywhere', async () => {
    await expect(decodeCookieCommand({ cookie: 'not-hex', nb: 'unix:/nonexistent/nb.sock' })).rejects.toBeInstanceOf(OvnCookieError);
  });

  it.skipIf(existsSync(DEFAULT_NB_REMOTE.slice('unix:'.length)))(
    'says to pass --nb when the local northbound socket is absent',
    async () => {
      const failure = decodeCookieCommand({ cookie: '2b000001000003ea' });
      await expect(failure).rejects.toBeInstanceOf(OvsdbConnectionError);
      await expect(failure).rejects.toThrow(/--nb REMOTE/);
    },
  );

  describe('through the ovn-psample binary', () => {
    it('decode --cookie prints the event', () => {
      const cookie = cookieHex(OVNK_SAMPLING_APP_IDS['acl-new'], 7, sampleMetadataOf(firewall));
      const json = JSON.parse(cliOutput(['decode', '--cookie', cookie, '--nb', dbs.nb.unixRemote, '--sb', dbs.sb.unixRemote]));
      expect(json.event).toMatchObject({ status: 'decoded', app: 'acl-new', message: 'Dropped by egress firewall in namespace payments' });
    });

    it('decode --cookie against an absent socket names the remote and why it could not be reached', () => {
      const failure = runCliSync(['decode', '--cookie', '2b000001000003ea', '--nb', 'unix:/nonexistent.sock']);
      expect(failure.status).toBe(1);
      expect(failure.stdout).toBe('');
      expect(failure.stderr).toMatch(/Cannot connect to OVN_Northbound: .*unix:\/nonexistent\.sock: connect ENOENT .*\[OVSDB_CONNECTION\]/);
      expect(failure.stderr).not.toContain('OVSDB_CLOSED');
    });

    it('decode --hex adds the event to each sample line, json and text', () => {
      const cookie = Buffer.from(cookieHex(OVNK_SAMPLING_APP_IDS['acl-est'], 7, sampleMetadataOf(firewall)), 'hex');
      const message = Buffer.from(encodePsample({ group: 10, proto: 0x800, userCookie: cookie, probability: true })).toString('hex');
      const remotes = ['--nb', dbs.nb.tcpRemote, '--sb', dbs.sb.tcpRemote];
      const json = JSON.parse(cliOutput(['decode', '--hex', message, ...remotes]));
      expect(json).toMatchObject({
        group: 10,
        ovn: { appId: OVNK_SAMPLING_APP_IDS['acl-est'], datapathKey: 7 },
        event: { status: 'decoded', app: 'acl-est', message: 'Dropped by egress firewall in namespace payments' },
      });
      const text = cliOutput(['decode', '--format', 'text', '--hex', message, ...remotes]);
      expect(text.trim()).toMatch(/\| Dropped by egress firewall in namespace payments$/);
    });

    it('listen --nb --sb streams live samples with their OVN verdict', async () => {
      const group = 12;
      const run = startCli([
        'listen',
        '--netns',
        ns.name,
        '--source',
        `usersock:34:${group}`,
        '--count',
        '1',
        '--format',
        'text',
        '--nb',
        dbs.nb.unixRemote,
        '--sb',
        dbs.sb.unixRemote,
      ]);
      await run.listening;
      const injector = createInjector({ protocol: 'usersock', groupId: group, netns: ns.name });
      const cookie = Buffer.from(cookieHex(OVNK_SAMPLING_APP_IDS['acl-new'], 7, sampleMetadataOf(firewall)), 'hex');
      injector.send(encodePsample({ group: 42, proto: 0x800, userCookie: cookie }));
      injector.close();
      expect(await run.exited).toBe(0);
      expect(run.stdout().trim()).toMatch(/^group=42 .*app=\d+ dp=7 .*\| Dropped by egress firewall in namespace payments$/);
    });

    it("listen --format json writes each sample with its cookie's event, as decode --hex does, and follows a database change", async () => {
      const group = 13;
      const point = sampleMetadataOf(firewall);
      const remotes = ['--nb', dbs.nb.unixRemote, '--sb', dbs.sb.unixRemote];
      const listener = startCli(['listen', '--netns', ns.name, '--source', `usersock:34:${group}`, ...remotes]);
      await listener.listening;
      const injector = createInjector({ protocol: 'usersock', groupId: group, netns: ns.name });
      const lines = (): string[] => listener.stdout().split('\n').slice(0, -1);
      try {
        const firewallCookie = Buffer.from(cookieHex(OVNK_SAMPLING_APP_IDS['acl-new'], 7, point), 'hex');
        const messages = [
          encodePsample({ group: 42, groupSeq: 1, proto: 0x800, userCookie: firewallCookie }),
          encodePsample({ group: 42, groupSeq: 2, proto: 0x800, userCookie: firewallCookie }),
          encodePsample({ group: 42, groupSeq: 3, proto: 0x800, userCookie: Buffer.from(cookieHex(200, 7, 1), 'hex') }),
          encodePsample({ group: 42, groupSeq: 4, proto: 0x800 }),
          encodePsample({ group: 42, groupSeq: 5, proto: 0x800, userCookie: new Uint8Array(16) }),
        ];
        for (const message of messages) injector.send(message);
        await waitFor(() => lines().length >= messages.length, 10_000, 'a line per sample');
        const decoded = messages.map((message) => cliOutput(['decode', '--hex', Buffer.from(message).toString('hex'), ...remotes]).trim());
        expect(lines()).toEqual(decoded);
        expect(lines().map((line) => (JSON.parse(line) as { event: { status: string; reason?: string } }).event)).toMatchObject([
          { status: 'decoded', message: 'Dropped by egress firewall in namespace payments' },
          { status: 'decoded', message: 'Dropped by egress firewall in namespace payments' },
          { status: 'unknown', reason: 'unknown-app' },
          { status: 'unknown', reason: 'not-ovn-cookie' },
          { status: 'unknown', reason: 'not-ovn-cookie' },
        ]);

        // The ACL's Sample gets another metadata: the cookie it had no longer names it.
        await dbs.nbWriter.transact('OVN_Northbound', [
          { op: 'update', table: 'Sample', where: [['metadata', '==', point]], row: { metadata: point + 1 } },
        ]);
        try {
          await waitFor(
            () => /"reason":"sample-not-found"/.test(cliOutput(['decode', '--hex', Buffer.from(messages[0]!).toString('hex'), ...remotes])),
            10_000,
            'the change',
          );
          injector.send(messages[0]!);
          await waitFor(() => lines().length > messages.length, 10_000, 'the line after the change');
          expect(JSON.parse(lines()[messages.length]!)).toMatchObject({
            groupSeq: 1,
            event: { status: 'stale', reason: 'sample-not-found' },
          });
        } finally {
          await dbs.nbWriter.transact('OVN_Northbound', [
            { op: 'update', table: 'Sample', where: [['metadata', '==', point + 1]], row: { metadata: point } },
          ]);
        }
      } finally {
        injector.close();
        listener.child.kill('SIGTERM');
      }
      expect(await listener.exited).toBe(0);
    });
  });
});

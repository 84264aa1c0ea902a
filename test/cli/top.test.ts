import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { encodePsample } from '../../src/index';
import { fileNetns } from '../support/netns';
import { cliMain, startCli } from '../support/cli';
import { icmpEcho } from './support/frames';
import { cookieOf, PODS, useOvnkNode } from './support/ovnk-node';

const ns = fileNetns('ovnps-top');
const GROUP = 16;

const node = useOvnkNode(ns, GROUP);

const args = (): string[] => node.cliArgs('top', ['--group', '42']);

/** `denied` packets tenant-b/client → shop/backend (pass then isolation drop) and `allowed` shop/frontend → shop/backend. */
function traffic(denied: number, allowed: number, seq0: number): void {
  for (let i = 0; i < denied; i++) {
    const data = icmpEcho({ src: PODS.client.ip, dst: PODS.backend.ip, seq: seq0 + i });
    node.injector.send(encodePsample({ group: 42, proto: 0x800, data, userCookie: cookieOf('anpPass') }));
    node.injector.send(encodePsample({ group: 42, proto: 0x800, data, userCookie: cookieOf('isolation') }));
  }
  for (let i = 0; i < allowed; i++) {
    node.injector.send(
      encodePsample({
        group: 42,
        proto: 0x800,
        data: icmpEcho({ src: PODS.frontend.ip, dst: PODS.backend.ip, seq: seq0 + 100 + i }),
        userCookie: cookieOf('allowFrontend'),
      }),
    );
  }
}

const tmux = (...command: string[]): string => execFileSync('tmux', command, { encoding: 'utf8' });

async function screenUntil(session: string, test: (screen: string) => boolean, what: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  let screen = '';
  while (Date.now() < deadline) {
    screen = tmux('capture-pane', '-p', '-t', session);
    if (test(screen)) return screen;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`top never showed ${what}; the screen:\n${screen}`);
}

it('top in a terminal: refreshes every second, sorts on keys, quits on q and gives the terminal back', async () => {
  const session = `ovnps-top-${process.pid}`;
  const logs = path.join(mkdtempSync(path.join(tmpdir(), 'ovnps-top-')), 'stderr.log');
  const command = [process.execPath, cliMain, ...args()].map((word) => `'${word}'`).join(' ');
  tmux('new-session', '-d', '-s', session, '-x', '220', '-y', '30', `${command} 2>${logs}; echo "top exited $?"; sleep 30`);
  try {
    await screenUntil(session, (screen) => screen.includes('ovn-psample top — last 10s, sorted by packets/s'), 'its header');
    traffic(5, 2, 1);
    const busiest = await screenUntil(session, (screen) => /PKTS\/S/.test(screen) && screen.includes('tenant-b/client'), 'the rows');
    const rows = busiest.split('\n').filter((line) => / (DROP|ALLOW) /.test(line));
    expect(rows[0]).toMatch(/^ +0\.5 +5 +(now|\ds ago) +DROP +anp:pass-monitoring→isolation:shop +shop +tenant-b\/client → shop\/backend$/);
    expect(rows[1]).toMatch(/^ +0\.2 +2 +(now|\ds ago) +ALLOW +np:shop\/allow-frontend +shop +shop\/frontend → shop\/backend$/);
    expect(busiest).toMatch(/7 packets in the window; 12 samples received, 0 dropped, 0 malformed/);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    traffic(0, 1, 50); // the allowed row is now the most recent
    tmux('send-keys', '-t', session, 'l');
    const byLast = await screenUntil(
      session,
      (screen) => screen.includes('sorted by last seen') && screen.includes(' 3 '),
      'the last-seen order',
    );
    const ordered = byLast.split('\n').filter((line) => / (DROP|ALLOW) /.test(line));
    expect(ordered[0]).toMatch(/ALLOW/);
    expect(ordered[1]).toMatch(/DROP/);

    tmux('send-keys', '-t', session, 'v');
    await screenUntil(session, (screen) => screen.includes('sorted by verdict'), 'the verdict order');
    tmux('send-keys', '-t', session, 'q');
    const after = await screenUntil(session, (screen) => screen.includes('top exited'), 'its exit');
    expect(after).toContain('top exited 0');
    const records = readFileSync(logs, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    expect(records.map((record) => record.msg)).toContain('OVN databases synced');
  } finally {
    tmux('kill-session', '-t', session);
  }
});

it('top --once gathers one window and prints one plain snapshot for scripts', async () => {
  const run = startCli([...args(), '--once', '--window', '2']);
  await run.listening;
  traffic(3, 1, 200);
  expect(await run.exited).toBe(0);
  const lines = run.stdout().trimEnd().split('\n');
  expect(lines[0]).toBe('ovn-psample top — last 2s, sorted by packets/s — keys: p packets/s, l last seen, v verdict, n namespace, q quit');
  expect(lines[1]).toBe('4 packets in the window; 7 samples received, 0 dropped, 0 malformed');
  expect(lines[3]).toMatch(/^PKTS\/S +PACKETS +LAST SEEN +VERDICT +POLICY +NAMESPACE +SOURCE → DESTINATION$/);
  expect(lines[4]).toMatch(/^ +1\.5 +3 .* DROP +anp:pass-monitoring→isolation:shop +shop +tenant-b\/client → shop\/backend$/);
  expect(lines[5]).toMatch(/^ +0\.5 +1 .* ALLOW +np:shop\/allow-frontend +shop +shop\/frontend → shop\/backend$/);
  expect(run.stdout()).not.toContain('\u001b[');
});

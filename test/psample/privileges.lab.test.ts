import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { jsonLines, startCli, type CliProcess } from '../support/cli';
import { loadModules, unloadModule } from '../support/lab/kernel';
import { createNetnsPair, deleteNetns, type NetnsEnd } from '../support/lab/netns';
import { startOvs, stopOvs } from '../support/lab/ovs';
import { traffic } from '../support/lab/shell';
import { deleteClsact, loadTcSampleModules, sampleIngress } from '../support/lab/tc';

// Least privilege on the real kernel: `ovn-psample listen` as nobody with CAP_NET_ADMIN alone
// (setpriv) receives tc act_sample samples; without the capability it fails naming it; as root
// with --drop-privileges=nobody it keeps receiving after the drop, and a psample reload then
// ends it with PSAMPLE_PERMISSION. The lines printed with "PROOF" are the evidence.
const GROUP = 91;
// listen decodes through OVN when /var/run/ovn/ovnnb_db.sock exists (another lab file may have
// started OVN): an empty tmpfs over it, in a mount namespace of the run's own.
const HIDE_OVN = 'if [ -d /var/run/ovn ]; then mount -t tmpfs -o size=64k ovn-hidden /var/run/ovn || exit 1; fi; exec "$@"';
const ONLY_NET_ADMIN = [
  '--reuid=nobody',
  '--regid=nogroup',
  '--clear-groups',
  '--inh-caps=-all,+net_admin',
  '--ambient-caps=-all,+net_admin',
  '--bounding-set=-all,+net_admin',
];
const NO_CAPABILITY = [
  '--reuid=nobody',
  '--regid=nogroup',
  '--clear-groups',
  '--inh-caps=-all',
  '--ambient-caps=-all',
  '--bounding-set=-all',
];

let sampled: NetnsEnd;
let peer: NetnsEnd;
let ovsWasRunning = false;

interface Listen extends CliProcess {
  command: string;
}

/** `ovn-psample listen ARGS` inside the sampled namespace, under `setpriv SETPRIV` when given. */
function listen(setpriv: readonly string[] | undefined, args: readonly string[]): Listen {
  const hidingOvn = ['unshare', '--mount', 'sh', '-c', HIDE_OVN, 'sh'];
  const netnsExec = ['ip', 'netns', 'exec', sampled.netns, ...(setpriv === undefined ? [] : ['setpriv', ...setpriv])];
  // unshare, sh, ip netns exec and setpriv each exec the next: the pid ends up being node's.
  const run = startCli(['listen', ...args], { wrapper: [...hidingOvn, ...netnsExec] });
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 90_000);
  void run.exited.then(() => clearTimeout(timer));
  return Object.assign(run, { command: run.child.spawnargs.slice(hidingOvn.length).join(' ') });
}

/** The credential lines of every thread of `pid`, as /proc shows them. */
function threadStatus(pid: number): Array<Record<string, string>> {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    const fields: Record<string, string> = { tid };
    for (const key of ['Name', 'Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs']) {
      fields[key] = (status.match(new RegExp(`^${key}:[ \\t]*(.*)$`, 'm'))?.[1] ?? '').trim().replace(/\s+/g, ' ');
    }
    return fields;
  });
}

const proofLine = (t: Record<string, string>): string =>
  `tid ${t.tid} ${t.Name}: Uid ${t.Uid} Gid ${t.Gid} Groups ${t.Groups || '-'} CapInh ${t.CapInh} CapPrm ${t.CapPrm} CapEff ${t.CapEff} CapBnd ${t.CapBnd} CapAmb ${t.CapAmb} NoNewPrivs ${t.NoNewPrivs}`;

const groupSeqs = (stdout: string): Array<[number, number]> =>
  jsonLines<{ group: number; groupSeq: number }>(stdout).map((sample) => [sample.group, sample.groupSeq]);

function ping(count: number): Promise<void> {
  return traffic(peer.netns, 'ping', ['-c', String(count), '-i', '0.2', sampled.ip]);
}

describe('least privilege on the real kernel', () => {
  beforeAll(() => {
    loadTcSampleModules();
    [sampled, peer] = createNetnsPair('pv', '10.83.0');
  });
  afterAll(() => {
    deleteNetns(sampled.netns, peer.netns);
    loadModules('psample', 'act_sample');
    if (ovsWasRunning) startOvs();
  });

  it('setpriv: nobody with CAP_NET_ADMIN alone receives real tc act_sample samples', async () => {
    sampleIngress(sampled, GROUP);
    try {
      const run = listen(ONLY_NET_ADMIN, ['--group', String(GROUP), '--count', '3', '--format', 'json']);
      await run.listening;
      const [main] = threadStatus(run.child.pid!);
      await ping(3);
      expect(await run.exited).toBe(0);
      console.log(`PROOF setpriv: ${run.command}`);
      console.log(`PROOF setpriv /proc/${run.child.pid!}/status: ${proofLine(main!)}`);
      console.log(
        `PROOF setpriv samples: ${JSON.stringify(groupSeqs(run.stdout()))} (group, GROUP_SEQ); ${run.stderr().trim().split('\n').pop()}`,
      );
      expect(main).toMatchObject({
        Uid: '65534 65534 65534 65534',
        Gid: '65534 65534 65534 65534',
        CapPrm: '0000000000001000',
        CapEff: '0000000000001000',
        CapBnd: '0000000000001000',
        CapAmb: '0000000000001000',
      });
      expect(groupSeqs(run.stdout())).toEqual([
        [GROUP, 0],
        [GROUP, 1],
        [GROUP, 2],
      ]);
    } finally {
      deleteClsact(sampled);
    }
  });

  it('setpriv: nobody without it fails with PSAMPLE_PERMISSION, naming CAP_NET_ADMIN (exit 1)', async () => {
    const run = listen(NO_CAPABILITY, ['--count', '1']);
    expect(await run.exited).toBe(1);
    console.log(`PROOF without the capability: ${run.command}\nPROOF -> ${run.stderr().trim()}`);
    expect(run.stderr()).toMatch(
      /joining the 'packets' multicast group needs CAP_NET_ADMIN, which this process does not have: .*\[PSAMPLE_PERMISSION\]/,
    );
  });

  it('--drop-privileges=nobody as root: every thread ends up nobody without capabilities, and samples keep flowing', async () => {
    sampleIngress(sampled, GROUP);
    try {
      const run = listen(undefined, ['--group', String(GROUP), '--count', '3', '--format', 'json', '--drop-privileges=nobody']);
      await run.listening;
      const threads = threadStatus(run.child.pid!);
      await ping(3);
      expect(await run.exited).toBe(0);
      console.log(`PROOF drop: ${run.command}`);
      console.log(
        `PROOF drop: ${run
          .stderr()
          .split('\n')
          .find((line) => line.includes('privileges dropped'))}`,
      );
      for (const thread of threads) console.log(`PROOF drop /proc/${run.child.pid!}/task/${proofLine(thread)}`);
      console.log(`PROOF drop samples after the drop: ${JSON.stringify(groupSeqs(run.stdout()))} (group, GROUP_SEQ)`);
      expect(threads.map((t) => t.Name)).toContain('psample-reader');
      for (const thread of threads) {
        expect(thread).toMatchObject({
          Uid: '65534 65534 65534 65534',
          Gid: '65534 65534 65534 65534',
          Groups: '65534',
          CapInh: '0000000000000000',
          CapPrm: '0000000000000000',
          CapEff: '0000000000000000',
          CapAmb: '0000000000000000',
        });
      }
      // Every thread but Node's SIGUSR1 watchdog (which blocks every signal) also lost its bounding set.
      expect(threads.filter((t) => t.CapBnd !== '0000000000000000' || t.NoNewPrivs !== '1').length).toBeLessThanOrEqual(1);
      expect(groupSeqs(run.stdout())).toEqual([
        [GROUP, 0],
        [GROUP, 1],
        [GROUP, 2],
      ]);
    } finally {
      deleteClsact(sampled);
    }
  });

  it('after --drop-privileges a psample reload cannot be rejoined: the run ends with PSAMPLE_PERMISSION (exit 1)', async () => {
    const run = listen(undefined, ['--drop-privileges=nobody']);
    await run.listening;
    ovsWasRunning = stopOvs() || ovsWasRunning;
    await unloadModule('psample');
    loadModules('psample', 'act_sample');
    expect(await run.exited).toBe(1);
    console.log(
      `PROOF reload after the drop -> ${run
        .stderr()
        .trim()
        .split('\n')
        .filter((l) => /PSAMPLE_PERMISSION/.test(l))
        .join(' ')}`,
    );
    expect(run.stderr()).toMatch(
      /the psample family registered again .* rejoining its packets group needs CAP_NET_ADMIN, which this process gave up \(dropPrivileges\).*\[PSAMPLE_PERMISSION\]/,
    );
  });
});

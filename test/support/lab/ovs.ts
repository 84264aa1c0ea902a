import { execFileSync } from 'node:child_process';
import { run } from './shell';

const running = (daemon: string): boolean => {
  try {
    execFileSync('pgrep', ['-x', daemon]);
    return true;
  } catch {
    return false;
  }
};

/**
 * Stops Open vSwitch if it runs, deleting its datapaths (so the openvswitch module, which uses
 * psample, can be unloaded); returns whether it was running, for startOvs().
 */
export function stopOvs(): boolean {
  const databaseRunning = ovsDatabaseRunning();
  const wasRunning = running('ovs-vswitchd') || databaseRunning;
  if (running('ovs-vswitchd')) run('ovs-appctl', ['-t', 'ovs-vswitchd', 'exit', '--cleanup']);
  if (databaseRunning) run('ovs-appctl', ['-t', 'ovsdb-server', 'exit']);
  return wasRunning;
}

/**
 * Whether Open vSwitch's own ovsdb-server runs: by its pidfile, since the ovsdb-servers of OVN's
 * northbound and southbound databases (ovnk-node.sh) have the same process name.
 */
function ovsDatabaseRunning(): boolean {
  try {
    execFileSync('ovs-appctl', ['-t', 'ovsdb-server', 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts Open vSwitch on its database as it was, as support/ovs-start.sh does for the files that use it. */
export function startOvs(): void {
  run('bash', [`${__dirname}/ovs-start.sh`]);
}

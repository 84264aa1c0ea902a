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
  const wasRunning = running('ovs-vswitchd') || running('ovsdb-server');
  if (running('ovs-vswitchd')) run('ovs-appctl', ['-t', 'ovs-vswitchd', 'exit', '--cleanup']);
  if (running('ovsdb-server')) run('ovs-appctl', ['-t', 'ovsdb-server', 'exit']);
  return wasRunning;
}

/** Starts Open vSwitch afresh, as support/ovs-start.sh does for the files that use it. */
export function startOvs(): void {
  run('bash', [`${__dirname}/ovs-start.sh`]);
}

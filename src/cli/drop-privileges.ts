import { Option } from 'commander';
import type { DropPrivilegesOptions, PrivilegeDropReport } from '../psample/types';
import { CliUsageError } from './errors';

/** `--drop-privileges[=USER[:GROUP]]`: commander gives true without a value. */
export const dropPrivilegesOption = (): Option =>
  new Option(
    '--drop-privileges [user]',
    'once the socket has joined, give up every capability in every thread and set no_new_privs; with USER[:GROUP], also switch to that user (and its groups)',
  );

export function dropPrivilegesFlag(value: string | boolean | undefined): true | DropPrivilegesOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return true;
  const [user, group, ...extra] = value.split(':');
  if (user === undefined || user === '' || group === '' || extra.length > 0) {
    throw new CliUsageError(`--drop-privileges=${value}: give USER or USER:GROUP (names or numeric ids), or no value to keep the user`);
  }
  return group === undefined ? { user } : { user, group };
}

/** One line for the log: who the process is now, and what the kernel still shows. */
export function describePrivileges(report: PrivilegeDropReport): string {
  const who = `uid ${report.uid} gid ${report.gid} groups ${report.groups.join(',') || 'none'}`;
  const bounding = report.boundingCleared ? ', empty bounding set' : ', bounding set kept (no CAP_SETPCAP)';
  const unreached = report.unreachedThreads.length;
  return (
    `privileges dropped: ${who}, no capabilities in ${report.threads - unreached} of ${report.threads} threads${bounding}, no_new_privs` +
    (unreached === 0
      ? ''
      : `; ${unreached} thread(s) block every signal and kept theirs (${report.unreachedThreads.map((t) => `tid ${t.tid} CapPrm ${t.permitted.toString(16)} CapBnd ${t.bounding.toString(16)}`).join('; ')})`)
  );
}

import type { PrivilegeDropReport } from '../psample/types';

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

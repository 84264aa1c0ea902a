import { addon } from '../native/binding';
import { fromNativeError, InvalidOptionError } from './errors';
import type { DropPrivilegesOptions, PrivilegeDropReport } from './types';

/** What the addon takes: user and group as a name or a decimal id. */
export interface PrivilegeRequest {
  user?: string;
  group?: string;
}

function principal(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 2 ** 32 - 1) return String(value);
  if (typeof value === 'string' && /^[^\0:\s]+$/.test(value)) return value;
  throw new InvalidOptionError(`${name} must be a user or group name or a numeric id, got ${JSON.stringify(value) ?? typeof value}`);
}

/** Checks a dropPrivileges option (before anything is opened); undefined: keep every privilege. */
export function privilegeRequest(option: boolean | DropPrivilegesOptions | undefined): PrivilegeRequest | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return {};
  if (typeof option !== 'object' || option === null) {
    throw new InvalidOptionError(`dropPrivileges must be true, false or { user, group }, got ${String(option)}`);
  }
  const user = principal('dropPrivileges.user', option.user);
  const group = principal('dropPrivileges.group', option.group);
  if (group !== undefined && user === undefined) throw new InvalidOptionError('dropPrivileges.group needs dropPrivileges.user');
  return { ...(user === undefined ? {} : { user }), ...(group === undefined ? {} : { group }) };
}

/**
 * Gives up privileges for good, in every thread of the process: all capabilities (effective,
 * permitted, inheritable, ambient, and the bounding set when CAP_SETPCAP allows it), sets
 * no_new_privs, and with a user switches uid, gid and supplementary groups. Call it once every
 * privileged step is done (openPsample({ dropPrivileges }) calls it after joining). The report
 * is what the kernel shows for every thread afterwards (/proc/self/task/*\/status).
 */
export function dropPrivileges(options: true | DropPrivilegesOptions = true): PrivilegeDropReport {
  const request = privilegeRequest(options) ?? {};
  try {
    return addon.dropPrivileges(request);
  } catch (error) {
    throw fromNativeError(error);
  }
}

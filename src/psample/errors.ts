import { OvnPsampleError } from '../errors';

/** The kernel has no psample family (module not loaded, kernel < 4.11, or no psample in this netns). */
export class PsampleUnavailableError extends OvnPsampleError {}
/** Joining psample's packets group needs CAP_NET_ADMIN (at open, and again after the family re-registers). */
export class PsamplePermissionError extends OvnPsampleError {
  /** The capability the process lacks. */
  readonly capability = 'CAP_NET_ADMIN';
}
export class NetnsNotFoundError extends OvnPsampleError {}
/** Entering another network namespace needs CAP_SYS_ADMIN (and reading /proc/PID/ns/net of another user's process, CAP_SYS_PTRACE). */
export class NetnsPermissionError extends OvnPsampleError {
  readonly capability = 'CAP_SYS_ADMIN';
}
/** Giving up privileges failed (dropPrivileges): the message names the step and the thread. */
export class PrivilegeDropError extends OvnPsampleError {}
export class InvalidOptionError extends OvnPsampleError {
  constructor(message: string) {
    super('INVALID_OPTION', message);
  }
}
/** The socket failed: at open (bind, eventfd) or later while reading. */
export class PsampleSocketError extends OvnPsampleError {}
export class InjectionError extends OvnPsampleError {}
/** Input that is not a well-formed psample netlink message. */
export class PsampleDecodeError extends OvnPsampleError {
  constructor(message: string) {
    super('PSAMPLE_MALFORMED', message);
  }
}

const classes: Record<string, new (code: string, message: string, options?: { cause?: unknown }) => OvnPsampleError> = {
  PSAMPLE_UNAVAILABLE: PsampleUnavailableError,
  PSAMPLE_PERMISSION: PsamplePermissionError,
  NETNS_NOT_FOUND: NetnsNotFoundError,
  NETNS_PERMISSION: NetnsPermissionError,
  SOCKET_ERROR: PsampleSocketError,
  SEND_FAILED: InjectionError,
  PRIVILEGE_DROP: PrivilegeDropError,
};

/** Turns an error thrown by the addon (plain Error with `code`) into its typed class. */
export function fromNativeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  if (code === 'INVALID_OPTION') return new InvalidOptionError(error.message);
  const ErrorClass = classes[code];
  return ErrorClass ? new ErrorClass(code, error.message, { cause: error }) : error;
}

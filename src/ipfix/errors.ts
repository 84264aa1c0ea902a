import { OvnPsampleError } from '../errors';

/** A datagram that is not a well-formed IPFIX message (RFC 7011): the message says what is wrong where. */
export class IpfixDecodeError extends OvnPsampleError {
  constructor(message: string) {
    super('IPFIX_MALFORMED', message);
  }
}

/**
 * The IPFIX socket could not be opened: `code` says why (IPFIX_ADDRESS_IN_USE, IPFIX_PERMISSION,
 * IPFIX_BAD_ADDRESS, IPFIX_SOCKET_ERROR) and the message what to do.
 */
export class IpfixSocketError extends OvnPsampleError {}

/** An option of openIpfix() is out of range or of the wrong type. */
export class IpfixOptionError extends OvnPsampleError {
  constructor(message: string) {
    super('INVALID_OPTION', message);
  }
}

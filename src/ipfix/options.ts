import { isIP } from 'node:net';
import type { DatagramDecoderOptions } from './datagram-decoder';
import { IpfixOptionError } from './errors';
import { DEFAULT_EXPORTERS } from './exporter-allow-list';

/** IANA's port for IPFIX (RFC 7011 section 10.3.4), OVS's default target port. */
export const DEFAULT_IPFIX_PORT = 4739;
export const DEFAULT_IPFIX_ADDRESS = '127.0.0.1';

export interface OpenIpfixOptions {
  /** Local address to bind; default 127.0.0.1. Binding another one is a choice: see `exporters`. */
  address?: string;
  /** UDP port; default 4739. 0 picks a free one (see IpfixSource.port). */
  port?: number;
  /** Exporters whose datagrams are decoded, as addresses or CIDR blocks; default loopback only (127.0.0.0/8, ::1). */
  exporters?: readonly string[];
  /** SO_RCVBUF to ask for; default 8 MiB. The kernel caps it at net.core.rmem_max (raise that for bursts). */
  receiveBufferBytes?: number;
  /** Records held for delivery while listeners or iterators fall behind, before queue drops are counted; default 262144. */
  queueCapacity?: number;
  /** A template not refreshed for this long is dropped; default 30 minutes (3 times OVS's 10-minute refresh). */
  templateLifetimeMs?: number;
  /** How long a data set that came before its template waits for it; default 30 s. */
  templateWaitMs?: number;
  /** Data sets held waiting for templates at most; default 65536. */
  pendingLimit?: number;
  /** Decode a domain's records with the same exporter's template of another domain (OVS < 3.2 sends one domain's); default true. */
  templateFallback?: boolean;
  /** Closes the source when aborted. */
  signal?: AbortSignal;
}

export interface CheckedIpfixOptions {
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
  readonly exporters: readonly string[];
  readonly receiveBufferBytes: number;
  readonly queueCapacity: number;
  readonly decoder: DatagramDecoderOptions;
}

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new IpfixOptionError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value) ?? typeof value}`);
  }
  return value;
}

/** The options with their defaults, every value checked before a socket is made. */
export function checkIpfixOptions(options: OpenIpfixOptions): CheckedIpfixOptions {
  const address = options.address ?? DEFAULT_IPFIX_ADDRESS;
  const family = isIP(address);
  if (family === 0)
    throw new IpfixOptionError(`address "${address}" is not an IPv4 or IPv6 address: give the local address to bind, e.g. 127.0.0.1`);
  if (
    options.exporters !== undefined &&
    (!Array.isArray(options.exporters) || options.exporters.some((entry) => typeof entry !== 'string'))
  ) {
    throw new IpfixOptionError('exporters must be an array of addresses or CIDR blocks');
  }
  if (options.templateFallback !== undefined && typeof options.templateFallback !== 'boolean') {
    throw new IpfixOptionError('templateFallback must be true or false');
  }
  return {
    address,
    family: family === 6 ? 6 : 4,
    port: integerIn('port', options.port ?? DEFAULT_IPFIX_PORT, 0, 65535),
    exporters: options.exporters ?? DEFAULT_EXPORTERS,
    receiveBufferBytes: integerIn('receiveBufferBytes', options.receiveBufferBytes ?? 8 * 1024 * 1024, 4096, 2 ** 31 - 1),
    queueCapacity: integerIn('queueCapacity', options.queueCapacity ?? 262_144, 1, 2 ** 31 - 1),
    decoder: {
      templateLifetimeMs: integerIn('templateLifetimeMs', options.templateLifetimeMs ?? 30 * 60_000, 1, 2 ** 31 - 1),
      templateWaitMs: integerIn('templateWaitMs', options.templateWaitMs ?? 30_000, 0, 2 ** 31 - 1),
      pendingLimit: integerIn('pendingLimit', options.pendingLimit ?? 65_536, 0, 2 ** 31 - 1),
      templateFallback: options.templateFallback ?? true,
    },
  };
}

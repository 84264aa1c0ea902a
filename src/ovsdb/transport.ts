import { readFile } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { checkServerIdentity, connect as connectTls } from 'node:tls';
import { OvsdbConnectionError } from '../errors';
import { formatRemote, type Remote } from './remote';

/**
 * Client credentials for ssl: remotes. Strings are file paths (as ovn-nbctl -p/-c/-C take), Buffers
 * PEM content. ovsdb-server demands a client certificate: key and cert may be left out only for
 * servers that do not.
 */
export interface SslOptions {
  readonly key?: string | Buffer;
  readonly cert?: string | Buffer;
  /** The CA that must have signed the server's certificate; anything else is refused. */
  readonly ca: string | Buffer;
  /**
   * Also require the certificate to name the host. Off by default, as in Open vSwitch, whose PKI
   * (ovs-pki) issues certificates that do not name hosts: trust comes from the CA alone.
   */
  readonly checkHostname?: boolean;
}

/** A remote with everything opening it takes: an ssl remote carries its credentials. */
export type Endpoint =
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'ssl'; readonly host: string; readonly port: number; readonly ssl: SslOptions };

/** Pairs each remote with what opening it takes; throws at once when an ssl remote has no credentials. */
export function endpointsOf(remotes: readonly Remote[], ssl: SslOptions | undefined): Endpoint[] {
  return remotes.map((remote): Endpoint => {
    if (remote.kind === 'unix') {
      return remote;
    }
    if (remote.kind === 'tcp') {
      return { kind: 'tcp', host: remote.host, port: remote.port };
    }
    if (ssl === undefined) {
      throw new OvsdbConnectionError(`Remote ${formatRemote(remote)} needs TLS credentials: pass options.ssl with key, cert and ca.`);
    }
    return { kind: 'ssl', host: remote.host, port: remote.port, ssl };
  });
}

/** Opens a byte stream to one endpoint; TLS is verified against `ssl.ca` before this resolves. */
export async function openStream(remote: Endpoint, timeoutMs: number, signal: AbortSignal): Promise<Socket> {
  const name = formatRemote(remote);
  let socket: Socket;
  let ready: string;
  if (remote.kind === 'unix') {
    socket = connectTcp({ path: remote.path });
    ready = 'connect';
  } else if (remote.kind === 'tcp') {
    socket = connectTcp({ host: remote.host, port: remote.port });
    ready = 'connect';
  } else {
    const { ssl } = remote;
    const [key, cert, ca] = await Promise.all([
      ssl.key === undefined ? undefined : pem(ssl.key, 'key'),
      ssl.cert === undefined ? undefined : pem(ssl.cert, 'cert'),
      pem(ssl.ca, 'ca'),
    ]);
    socket = connectTls({
      host: remote.host,
      port: remote.port,
      key,
      cert,
      ca,
      rejectUnauthorized: true,
      checkServerIdentity: ssl.checkHostname === true ? checkServerIdentity : () => undefined,
    });
    ready = 'secureConnect';
  }
  return new Promise<Socket>((resolve, reject) => {
    const fail = (error: Error) => {
      cleanup();
      socket.destroy();
      reject(new OvsdbConnectionError(`Cannot connect to ${name}: ${explainSocketError(error)}`, { cause: error }));
    };
    const onReady = () => {
      cleanup();
      socket.setNoDelay(true);
      resolve(socket);
    };
    const onTimeout = () => fail(new Error(`no answer within ${timeoutMs} ms`));
    const onAbort = () => fail(new Error('aborted'));
    const timer = setTimeout(onTimeout, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('error', fail);
      socket.off(ready, onReady);
      signal.removeEventListener('abort', onAbort);
    };
    socket.once('error', fail);
    socket.once(ready, onReady);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) {
      onAbort();
    }
  });
}

/** What a system or TLS error means for an OVSDB remote. */
const ADVICE: Readonly<Record<string, string>> = {
  ENOENT: 'no socket at that path: is ovsdb-server running, and is the path right?',
  ECONNREFUSED: 'nothing listens there: is ovsdb-server running with that remote?',
  EACCES: 'permission denied: run as root or as a user allowed to open the socket',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ENOTFOUND: 'the host name does not resolve',
  // The server's verdict on our certificate arrives as a TLS alert, after the handshake (TLS 1.3).
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: 'the server demands a client certificate: pass options.ssl.key and options.ssl.cert',
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA:
    'the server does not trust the client certificate: options.ssl.cert must be signed by the CA the server was given (its --ca-cert)',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'the server refused the client certificate (options.ssl.cert)',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: 'the server says the client certificate (options.ssl.cert) has expired',
  // Our verdict on the server's certificate.
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's certificate is not signed by options.ssl.ca",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the server's certificate is not signed by options.ssl.ca",
  SELF_SIGNED_CERT_IN_CHAIN: "the server's certificate chain ends at a CA other than options.ssl.ca",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's certificate is self-signed, not signed by options.ssl.ca",
  CERT_HAS_EXPIRED: "the server's certificate has expired",
  CERT_NOT_YET_VALID: "the server's certificate is not valid yet: check the clocks",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's certificate does not name this host (options.ssl.checkHostname)",
};

/**
 * A socket error in words a user can act on, its code kept for searching. OpenSSL's own text
 * ("0A00045C:SSL routines:ssl3_read_bytes:…") is replaced when the code is known.
 */
export function explainSocketError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const advice = code === undefined ? undefined : ADVICE[code];
  if (advice === undefined) {
    return error.message.trim();
  }
  return code!.startsWith('ERR_SSL_') ? `TLS: ${advice} (${code})` : `${error.message.trim()} (${advice})`;
}

async function pem(source: string | Buffer, what: string): Promise<Buffer> {
  if (Buffer.isBuffer(source)) {
    return source;
  }
  try {
    return await readFile(source);
  } catch (error) {
    throw new OvsdbConnectionError(`Cannot read the TLS ${what} file ${source}: check options.ssl.${what}.`, { cause: error });
  }
}

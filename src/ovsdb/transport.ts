import { readFile } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { checkServerIdentity, connect as connectTls } from 'node:tls';
import { OvsdbConnectionError } from '../errors';
import { formatRemote, type Remote } from './remote';

/** Client credentials for ssl: remotes. Strings are file paths (as ovn-nbctl -p/-c/-C take), Buffers PEM content. */
export interface SslOptions {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
  /** The CA that must have signed the server's certificate; anything else is refused. */
  readonly ca: string | Buffer;
  /**
   * Also require the certificate to name the host. Off by default, as in Open vSwitch, whose PKI
   * (ovs-pki) issues certificates that do not name hosts: trust comes from the CA alone.
   */
  readonly checkHostname?: boolean;
}

/** Opens a byte stream to one remote; TLS is verified against `ssl.ca` before this resolves. */
export async function openStream(remote: Remote, ssl: SslOptions | undefined, timeoutMs: number, signal: AbortSignal): Promise<Socket> {
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
    if (ssl === undefined) {
      throw new OvsdbConnectionError(`Remote ${name} needs TLS credentials: pass options.ssl with key, cert and ca.`);
    }
    const [key, cert, ca] = await Promise.all([pem(ssl.key, 'key'), pem(ssl.cert, 'cert'), pem(ssl.ca, 'ca')]);
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
      reject(new OvsdbConnectionError(`Cannot connect to ${name}: ${error.message}`, { cause: error }));
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

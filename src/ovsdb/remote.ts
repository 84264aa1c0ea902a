import { isIP } from 'node:net';
import { OvsdbRemoteError } from '../errors';

/** The port ovsdb-server listens on when a tcp:/ssl: remote names none (IANA "ovsdb"). */
export const DEFAULT_OVSDB_PORT = 6640;

export type Remote =
  { readonly kind: 'unix'; readonly path: string } | { readonly kind: 'tcp' | 'ssl'; readonly host: string; readonly port: number };

/**
 * Parses remotes in ovn-nbctl syntax: `unix:PATH`, `tcp:HOST[:PORT]`, `ssl:HOST[:PORT]`, IPv6
 * literals in brackets (`tcp:[::1]:6641`), and comma-separated lists naming cluster members.
 */
export function parseRemotes(remotes: string | readonly string[]): Remote[] {
  const list = (typeof remotes === 'string' ? [remotes] : remotes)
    .flatMap((remote) => remote.split(','))
    .map((remote) => remote.trim())
    .filter((remote) => remote !== '');
  if (list.length === 0) {
    throw new OvsdbRemoteError('No OVSDB remote given: pass one such as unix:/var/run/ovn/ovnnb_db.sock or tcp:10.0.0.1:6641.');
  }
  return list.map(parseRemote);
}

export function formatRemote(remote: Remote): string {
  if (remote.kind === 'unix') {
    return `unix:${remote.path}`;
  }
  const host = isIP(remote.host) === 6 ? `[${remote.host}]` : remote.host;
  return `${remote.kind}:${host}:${remote.port}`;
}

function parseRemote(text: string): Remote {
  const colon = text.indexOf(':');
  const method = colon < 0 ? '' : text.slice(0, colon);
  const rest = text.slice(colon + 1);
  if (method === 'unix') {
    if (rest === '') {
      throw bad(text, 'unix: needs a socket path');
    }
    return { kind: 'unix', path: rest };
  }
  if (method === 'tcp' || method === 'ssl') {
    const { host, port } = parseHostPort(text, rest);
    return { kind: method, host, port };
  }
  if (method === 'punix' || method === 'ptcp' || method === 'pssl') {
    throw bad(text, `${method}: is a listening remote; a client connects with ${method.slice(1)}:`);
  }
  throw bad(text, 'the method must be unix:, tcp: or ssl:');
}

function parseHostPort(text: string, rest: string): { host: string; port: number } {
  let host: string;
  let portText: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) {
      throw bad(text, 'an IPv6 literal needs a closing "]"');
    }
    host = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) {
      throw bad(text, 'expected ":PORT" after the IPv6 literal');
    }
    portText = after === '' ? undefined : after.slice(1);
    if (isIP(host) !== 6) {
      throw bad(text, `"${host}" is not an IPv6 address`);
    }
  } else {
    const parts = rest.split(':');
    if (parts.length > 2) {
      throw bad(text, 'write IPv6 addresses in brackets, as in tcp:[fd00::1]:6641');
    }
    host = parts[0] ?? '';
    portText = parts[1];
  }
  if (host === '') {
    throw bad(text, 'the host is missing');
  }
  if (portText === undefined || portText === '') {
    return { host, port: DEFAULT_OVSDB_PORT };
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) {
    throw bad(text, `"${portText}" is not a port number (1-65535)`);
  }
  return { host, port };
}

function bad(text: string, why: string): OvsdbRemoteError {
  return new OvsdbRemoteError(
    `Invalid OVSDB remote "${text}": ${why}. Use unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT, comma-separated for a cluster.`,
  );
}

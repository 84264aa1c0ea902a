import { existsSync } from 'node:fs';
import { OvsdbConnectionError } from '../errors';
import { formatCookieHex, observationIdsFromCookie, parseCookieHex, type ObservationIds } from '../ovn/cookie';
import { OvnSampleDecoder } from '../ovn/decoder';
import type { OvnSampleEvent } from '../ovn/event';
import { formatOvnEvent } from '../ovn/event-text';

/** The sockets ovn-central listens on (ovn-ctl defaults). */
export const DEFAULT_NB_REMOTE = 'unix:/var/run/ovn/ovnnb_db.sock';
export const DEFAULT_SB_REMOTE = 'unix:/var/run/ovn/ovnsb_db.sock';

/** A one-shot CLI should not wait the library's 30 s for a database that is not there. */
const CLI_CONNECT_TIMEOUT_MS = 10_000;

export interface OvnRemoteOptions {
  /** --nb: northbound remote(s) in ovn-nbctl syntax; default the local socket. */
  readonly nb?: string;
  /** --sb: southbound remote(s); default the local socket when it exists, else decode without it. */
  readonly sb?: string;
  readonly signal?: AbortSignal;
}

function socketPath(remote: string): string {
  return remote.slice('unix:'.length);
}

function resolveRemotes(options: OvnRemoteOptions): { nb: string; sb: string | undefined } {
  if (options.nb === undefined && !existsSync(socketPath(DEFAULT_NB_REMOTE))) {
    throw new OvsdbConnectionError(
      `No OVN northbound database at ${DEFAULT_NB_REMOTE}: run this on an ovn-central node, or pass --nb REMOTE (e.g. --nb tcp:192.0.2.10:6641).`,
    );
  }
  const sb = options.sb ?? (existsSync(socketPath(DEFAULT_SB_REMOTE)) ? DEFAULT_SB_REMOTE : undefined);
  return { nb: options.nb ?? DEFAULT_NB_REMOTE, sb };
}

/** The user named a database, or this node runs ovn-central: then samples are decoded through OVN. */
export function ovnWanted(options: OvnRemoteOptions): boolean {
  return options.nb !== undefined || options.sb !== undefined || existsSync(socketPath(DEFAULT_NB_REMOTE));
}

/** A decoder synced to the live databases (the caller closes it). */
export async function startOvnDecoder(options: OvnRemoteOptions): Promise<OvnSampleDecoder> {
  const { nb, sb } = resolveRemotes(options);
  const decoder = new OvnSampleDecoder({
    nb,
    ...(sb === undefined ? {} : { sb }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    client: { connectTimeoutMs: CLI_CONNECT_TIMEOUT_MS },
  });
  try {
    await decoder.start();
  } catch (error) {
    await decoder.close();
    throw error;
  }
  return decoder;
}

/** Runs `use` with a decoder synced to the live databases, then disconnects. */
async function withOvnDecoder<T>(options: OvnRemoteOptions, use: (decoder: OvnSampleDecoder) => Promise<T>): Promise<T> {
  const decoder = await startOvnDecoder(options);
  try {
    return await use(decoder);
  } finally {
    await decoder.close();
  }
}

/**
 * Decodes OVN sample cookies against the live databases: connects, waits for the initial sync,
 * decodes each cookie, then disconnects. For `decode --cookie` and for `decode --hex` (pass the
 * psample message's user cookie, or its observation ids).
 */
export async function decodeWithOvn(
  cookies: readonly (Uint8Array | ObservationIds)[],
  options: OvnRemoteOptions = {},
): Promise<OvnSampleEvent[]> {
  return withOvnDecoder(options, (decoder) =>
    Promise.all(
      cookies.map(async (cookie) => {
        const ids = cookie instanceof Uint8Array ? observationIdsFromCookie(cookie) : cookie;
        return ids === undefined ? decoder.decodeCookie(cookie as Uint8Array) : decoder.decodeWithDetails(ids.obsDomainId, ids.obsPointId);
      }),
    ),
  );
}

export interface DecodeCookieOptions extends OvnRemoteOptions {
  /** --cookie: 16 hex digits, obs_domain_id then obs_point_id. */
  readonly cookie: string;
  readonly format?: 'json' | 'text';
}

/** `ovn-psample decode --cookie HEX`: the JSON line ({cookie, event}) or the text to print. */
export async function decodeCookieCommand(options: DecodeCookieOptions): Promise<string> {
  const ids = parseCookieHex(options.cookie);
  const event = await withOvnDecoder(options, (decoder) => decoder.decodeWithDetails(ids.obsDomainId, ids.obsPointId));
  const cookie = formatCookieHex(ids);
  return options.format === 'text' ? `cookie ${cookie}\n${formatOvnEvent(event)}` : JSON.stringify({ cookie, event });
}

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { OvsdbClosedError, OvsdbConnectionError } from '../errors';
import type { Backoff } from './backoff';
import { JsonRpcSession, type InactivityProbe } from './json-rpc';
import { formatRemote, type Remote } from './remote';
import { openStream, type Endpoint } from './transport';

/** A session that lasted this long resets the backoff; shorter ones count as failed attempts. */
const STABLE_SESSION_MS = 5000;

/** Where the loop is, as OvsdbClient's 'status' event reports it (minus monitor syncs). */
export type SessionStatus =
  | { readonly state: 'connecting'; readonly remote: string }
  | { readonly state: 'connected'; readonly remote: string }
  | {
      readonly state: 'disconnected';
      readonly remote: string;
      /** Why; undefined when the client was closed. */
      readonly error: Error | undefined;
      /** Delay before the next attempt (0: the next member is tried at once); undefined when closed. */
      readonly retryInMs: number | undefined;
    };

export interface SessionLoopOptions {
  /** The remotes as the user gave them, for error messages. */
  readonly remotes: readonly Remote[];
  /** The order members are tried in (shuffled, like the OVS IDL does, so clients spread over a cluster). */
  readonly endpoints: readonly Endpoint[];
  readonly backoff: Backoff;
  /** Bounds one attempt: opening the stream, and then the server's answers to the first requests. */
  readonly attemptTimeoutMs: number;
  /** For tcp: and ssl: sessions; unix: sessions are never probed. */
  readonly probe: InactivityProbe;
  readonly maxMessageBytes: number;
}

export interface SessionHooks {
  /** Makes a fresh session usable (qualifies the member); rejects to refuse it. */
  open(session: JsonRpcSession, remote: string): Promise<void>;
  /** The session passed: requests and monitors may use it now. */
  ready(session: JsonRpcSession, remote: string): void;
  notification(session: JsonRpcSession, method: string, params: unknown): void;
  anomaly(error: Error): void;
  status(status: SessionStatus): void;
}

interface SessionWaiter {
  resolve(session: JsonRpcSession): void;
  reject(error: Error): void;
}

/**
 * Keeps one session open over a list of remotes (a cluster's members): moves to the next member
 * when a session fails or is refused, backs off with jitter once every member failed, and after
 * a stable session ended (a server restart) waits a jittered delay too, so the clients of a
 * restarted server do not all come back in the same instant.
 */
export class SessionLoop {
  private readonly lastErrors = new Map<string, Error>();
  private readonly waiters = new Set<SessionWaiter>();
  private readonly stopper = new AbortController();
  /** The session that passed qualification; requests go there. */
  private session: JsonRpcSession | undefined;
  /** Any session in progress, qualified or not, so close() can end it. */
  private opening: JsonRpcSession | undefined;
  private currentRemote = '';
  private closed = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: SessionLoopOptions,
    private readonly hooks: SessionHooks,
  ) {}

  start(): void {
    this.done = this.run();
  }

  /** The usable session, if any. */
  get active(): JsonRpcSession | undefined {
    return this.session !== undefined && !this.session.closed ? this.session : undefined;
  }

  /** The remote of the usable session ('' while there is none). */
  get remote(): string {
    return this.active === undefined ? '' : this.currentRemote;
  }

  /**
   * The usable session, waiting up to `timeoutMs` for one; then rejects with an
   * OvsdbConnectionError that names every remote and why it could not be used.
   */
  waitForSession(timeoutMs: number, what: string): Promise<JsonRpcSession> {
    if (this.closed) {
      return Promise.reject(new OvsdbClosedError('The OVSDB client is closed.'));
    }
    const active = this.active;
    if (active !== undefined) {
      return Promise.resolve(active);
    }
    return new Promise<JsonRpcSession>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(this.unreachable(timeoutMs, what));
      }, timeoutMs);
      const waiter: SessionWaiter = {
        resolve: (session) => {
          clearTimeout(timer);
          resolve(session);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Ends the loop; waiters reject with `error`. Resolves when the last session is over. */
  close(error: OvsdbClosedError): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.stopper.abort();
      this.opening?.close(error);
      for (const waiter of this.waiters) {
        waiter.reject(error);
      }
      this.waiters.clear();
    }
    return this.done;
  }

  private async run(): Promise<void> {
    const { endpoints, backoff } = this.options;
    let failuresInRound = 0;
    for (let index = 0; !this.closed; index = (index + 1) % endpoints.length) {
      const endpoint = endpoints[index]!;
      const started = performance.now();
      const { connected, error } = await this.runSession(endpoint);
      let retryInMs: number | undefined;
      if (!this.closed) {
        if (connected && performance.now() - started >= STABLE_SESSION_MS) {
          // A stable session ended: a restart drops every client of the server at once.
          failuresInRound = 0;
          backoff.reset();
          retryInMs = backoff.next();
        } else {
          // A server that accepts and then drops us at once must not get a reconnection storm.
          failuresInRound++;
          retryInMs = failuresInRound >= endpoints.length ? backoff.next() : 0;
        }
      }
      this.hooks.status({ state: 'disconnected', remote: formatRemote(endpoint), error: this.closed ? undefined : error, retryInMs });
      if (retryInMs !== undefined && retryInMs > 0) {
        failuresInRound = 0;
        await sleep(retryInMs, undefined, { signal: this.stopper.signal }).catch(() => undefined);
      }
    }
  }

  /** One session with one remote, from connecting to its end. */
  private async runSession(endpoint: Endpoint): Promise<{ connected: boolean; error: Error | undefined }> {
    const name = formatRemote(endpoint);
    this.hooks.status({ state: 'connecting', remote: name });
    let session: JsonRpcSession | undefined;
    let connected = false;
    try {
      const socket = await openStream(endpoint, this.options.attemptTimeoutMs, this.stopper.signal);
      let ended!: (error: Error | undefined) => void;
      const closed = new Promise<Error | undefined>((resolve) => (ended = resolve));
      const current: JsonRpcSession = new JsonRpcSession(
        socket,
        {
          onNotification: (method, params) => this.hooks.notification(current, method, params),
          onAnomaly: (error) => this.hooks.anomaly(error),
          onClose: (error) => ended(error),
        },
        endpoint.kind === 'unix' ? { probeMs: 0, timeoutMs: 0 } : this.options.probe,
        this.options.maxMessageBytes,
      );
      session = current;
      this.opening = current;
      if (this.closed) {
        current.close(new OvsdbClosedError('The OVSDB client was closed.'));
      }
      await this.handshake(current, name);
      connected = true;
      this.session = current;
      this.currentRemote = name;
      this.lastErrors.delete(name);
      this.hooks.status({ state: 'connected', remote: name });
      for (const waiter of this.waiters) {
        waiter.resolve(current);
      }
      this.waiters.clear();
      this.hooks.ready(current, name);
      const error = await closed;
      if (error !== undefined) {
        this.lastErrors.set(name, error);
      }
      return { connected, error };
    } catch (error) {
      // A request failing because the session ended (a timeout, a TLS alert) says less than why it ended.
      const reason = session?.closeReason ?? (error instanceof Error ? error : new Error(String(error)));
      session?.close(reason);
      this.lastErrors.set(name, reason);
      return { connected, error: reason };
    } finally {
      if (this.session === session) {
        this.session = undefined;
      }
      if (this.opening === session) {
        this.opening = undefined;
      }
    }
  }

  /**
   * Qualifies a new session within attemptTimeoutMs: a peer that accepts connections and answers
   * nothing (a wedged or stopped server, something else listening there) must not hold the
   * loop, unix: sessions having no inactivity probe.
   */
  private async handshake(session: JsonRpcSession, name: string): Promise<void> {
    const timeoutMs = this.options.attemptTimeoutMs;
    const timer = setTimeout(
      () =>
        session.close(
          new OvsdbConnectionError(
            `${name} accepted the connection but did not answer within ${timeoutMs} ms: is an OVSDB server listening there, and is it running (not stopped)?`,
          ),
        ),
      timeoutMs,
    );
    try {
      await this.hooks.open(session, name);
    } finally {
      clearTimeout(timer);
    }
  }

  private unreachable(timeoutMs: number, what: string): OvsdbConnectionError {
    const attempts = this.options.remotes.map((remote) => {
      const name = formatRemote(remote);
      return { remote: name, error: this.lastErrors.get(name) };
    });
    // Most errors already name their remote ("Cannot connect to unix:/x: ...").
    const causes = attempts.map(({ remote, error }) =>
      error === undefined ? `${remote}: not tried yet` : error.message.includes(remote) ? error.message : `${remote}: ${error.message}`,
    );
    return new OvsdbConnectionError(
      `${what}: no OVSDB remote was usable within ${timeoutMs} ms (${causes.join('; ')}). Check that ovsdb-server listens there, the TLS credentials, and for a cluster that a leader is elected.`,
      { cause: attempts.find(({ error }) => error !== undefined)?.error, attempts },
    );
  }
}

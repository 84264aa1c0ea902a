import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { OvsdbDisconnectedError, OvsdbProtocolError, OvsdbRpcError } from '../errors';
import { DEFAULT_MAX_MESSAGE_BYTES, JsonStreamFramer } from './framing';
import { explainSocketError } from './transport';

export interface JsonRpcHandlers {
  /** A notification (a request with id null), such as update3. */
  onNotification(method: string, params: unknown): void;
  /** Protocol trouble that does not end the session (a reply to an unknown id, say). */
  onAnomaly(error: Error): void;
  /** Called once when the session ends, with the reason unless it was closed locally without one. */
  onClose(error: Error | undefined): void;
}

/** When the session checks the server's silence, and how long it tolerates it. */
export interface InactivityProbe {
  /** Silence after which an echo is sent; 0: never probe (unix: streams, where the kernel reports a dead peer). */
  readonly probeMs: number;
  /**
   * Silence after which the session is dropped. ovsdb-server answers nothing, not even echo, while
   * it compacts a database, builds a 100,000-row reply or holds a raft election: dropping then
   * would cost a full reload from a standalone server, which keeps no transaction history.
   */
  readonly timeoutMs: number;
}

interface PendingRequest {
  readonly method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * One JSON-RPC 1.0 session (RFC 7047 section 4) over a connected stream: requests matched to
 * replies by id, the server's echo requests answered, and an inactivity probe that sends an echo
 * after `probeMs` of silence and drops the connection after `timeoutMs` without any message.
 * Silence is measured on the monotonic clock: a wall-clock step (NTP, suspend) is no silence.
 */
export class JsonRpcSession {
  private readonly pending = new Map<number, PendingRequest>();
  private readonly framer: JsonStreamFramer;
  private readonly probeTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private lastReceived = performance.now();
  private probeSent = false;
  private ended = false;
  private reason: Error | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly handlers: JsonRpcHandlers,
    probe: InactivityProbe,
    maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {
    this.framer = new JsonStreamFramer((message) => this.dispatch(message), maxMessageBytes);
    socket.on('data', (chunk: Buffer) => {
      try {
        // Whitespace alone is no sign of life: only bytes of messages reset the inactivity probe.
        if (this.framer.push(chunk) > 0) {
          this.lastReceived = performance.now();
          this.probeSent = false;
        }
      } catch (error) {
        this.end(error as Error);
      }
    });
    socket.on('error', (error) =>
      this.end(new OvsdbDisconnectedError(`The OVSDB connection failed: ${explainSocketError(error)}`, { cause: error })),
    );
    socket.on('close', () =>
      this.end(
        new OvsdbDisconnectedError(
          this.framer.bufferedBytes > 0
            ? `The OVSDB server closed the connection in the middle of a message (${this.framer.bufferedBytes} bytes received of it).`
            : 'The OVSDB server closed the connection.',
        ),
      ),
    );
    if (probe.probeMs > 0) {
      this.probeTimer = setInterval(() => this.probe(probe), Math.max(10, Math.floor(Math.min(probe.probeMs, probe.timeoutMs) / 4)));
      this.probeTimer.unref();
    }
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Why the session ended, when it did not end by close() without a reason. */
  get closeReason(): Error | undefined {
    return this.reason;
  }

  /** Sends a request; resolves with its result, rejects with OvsdbRpcError or OvsdbDisconnectedError. */
  request(method: string, params: unknown[]): Promise<unknown> {
    if (this.ended) {
      return Promise.reject(new OvsdbDisconnectedError(`Cannot send "${method}": the OVSDB connection is closed.`));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      this.write({ method, params, id });
    });
  }

  /** Ends the session; pending requests reject with `error` (or a generic disconnection). */
  close(error?: Error): void {
    this.end(error, true);
  }

  private write(message: unknown): void {
    this.socket.write(JSON.stringify(message));
  }

  private probe({ probeMs, timeoutMs }: InactivityProbe): void {
    const silentMs = performance.now() - this.lastReceived;
    if (silentMs >= timeoutMs) {
      this.end(
        new OvsdbDisconnectedError(
          `The OVSDB server sent nothing for ${Math.round(silentMs)} ms, not even an echo reply (inactivity probe; the limit is inactivityTimeoutMs, ${timeoutMs} ms).`,
        ),
      );
    } else if (!this.probeSent && silentMs >= probeMs) {
      this.probeSent = true;
      this.request('echo', []).catch(() => undefined);
    }
  }

  private dispatch(message: unknown): void {
    // Messages after the end in the same chunk belong to a dead session: its requests were already rejected.
    if (this.ended) {
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.handlers.onAnomaly(new OvsdbProtocolError('The server sent a JSON-RPC message that is not an object; ignored.'));
      return;
    }
    const { method, params, id, result, error } = message as Record<string, unknown>;
    if (typeof method === 'string') {
      if (id === null || id === undefined) {
        this.handlers.onNotification(method, params);
      } else if (method === 'echo') {
        this.write({ result: params, error: null, id });
      } else {
        this.write({ result: null, error: 'unknown method', id });
      }
      return;
    }
    const request = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (request === undefined) {
      this.handlers.onAnomaly(
        new OvsdbProtocolError(`The server replied to a request id ${JSON.stringify(id)} this client never sent; ignored.`),
      );
      return;
    }
    this.pending.delete(id as number);
    if (error !== null && error !== undefined) {
      request.reject(new OvsdbRpcError(request.method, error));
    } else {
      request.resolve(result);
    }
  }

  private end(error: Error | undefined, local = false): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    this.reason = error;
    if (this.probeTimer !== undefined) {
      clearInterval(this.probeTimer);
    }
    this.socket.destroy();
    const reason = error ?? new OvsdbDisconnectedError('The OVSDB connection was closed by this client.');
    for (const request of this.pending.values()) {
      request.reject(
        reason instanceof OvsdbDisconnectedError || local
          ? reason
          : new OvsdbDisconnectedError(`The OVSDB connection broke during "${request.method}": ${reason.message}`, { cause: reason }),
      );
    }
    this.pending.clear();
    this.handlers.onClose(error);
  }
}

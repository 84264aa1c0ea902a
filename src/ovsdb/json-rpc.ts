import type { Socket } from 'node:net';
import { OvsdbDisconnectedError, OvsdbProtocolError, OvsdbRpcError } from '../errors';
import { JsonStreamFramer } from './framing';

export interface JsonRpcHandlers {
  /** A notification (a request with id null), such as update3. */
  onNotification(method: string, params: unknown): void;
  /** Protocol trouble that does not end the session (a reply to an unknown id, say). */
  onAnomaly(error: Error): void;
  /** Called once when the session ends, with the reason unless it was closed locally without one. */
  onClose(error: Error | undefined): void;
}

/**
 * ovsdb-server answers nothing, not even echo, while it builds a large reply (seconds for a
 * 100,000-row monitor): while a real request is outstanding, silence is tolerated this long.
 */
const BUSY_SERVER_GRACE_MS = 60_000;

interface PendingRequest {
  readonly method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * One JSON-RPC 1.0 session (RFC 7047 section 4) over a connected stream: requests matched to
 * replies by id, the server's echo requests answered, and an inactivity probe that sends an echo
 * after `probeMs` of silence and drops the connection after as long again without any message.
 */
export class JsonRpcSession {
  private readonly pending = new Map<number, PendingRequest>();
  private readonly framer: JsonStreamFramer;
  private readonly probeTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private lastReceived = Date.now();
  private probeSentAt: number | undefined;
  private ended = false;

  constructor(
    private readonly socket: Socket,
    private readonly handlers: JsonRpcHandlers,
    probeMs: number,
  ) {
    this.framer = new JsonStreamFramer((message) => this.dispatch(message));
    socket.on('data', (chunk: Buffer) => {
      this.lastReceived = Date.now();
      this.probeSentAt = undefined;
      try {
        this.framer.push(chunk);
      } catch (error) {
        this.end(error as Error);
      }
    });
    socket.on('error', (error) => this.end(new OvsdbDisconnectedError(`The OVSDB connection failed: ${error.message}`, { cause: error })));
    socket.on('close', () =>
      this.end(
        new OvsdbDisconnectedError(
          this.framer.bufferedBytes > 0
            ? `The OVSDB server closed the connection in the middle of a message (${this.framer.bufferedBytes} bytes received of it).`
            : 'The OVSDB server closed the connection.',
        ),
      ),
    );
    if (probeMs > 0) {
      this.probeTimer = setInterval(() => this.probe(probeMs), Math.max(10, Math.floor(probeMs / 4)));
      this.probeTimer.unref();
    }
  }

  get closed(): boolean {
    return this.ended;
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

  private probe(probeMs: number): void {
    const now = Date.now();
    if (this.probeSentAt !== undefined) {
      const busy = [...this.pending.values()].some((request) => request.method !== 'echo');
      if (now - this.probeSentAt >= (busy ? Math.max(probeMs, BUSY_SERVER_GRACE_MS) : probeMs)) {
        this.end(new OvsdbDisconnectedError(`The OVSDB server sent nothing for ${now - this.lastReceived} ms, not even an echo reply (inactivity probe).`));
      }
    } else if (now - this.lastReceived >= probeMs) {
      this.probeSentAt = now;
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
      this.handlers.onAnomaly(new OvsdbProtocolError(`The server replied to a request id ${JSON.stringify(id)} this client never sent; ignored.`));
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

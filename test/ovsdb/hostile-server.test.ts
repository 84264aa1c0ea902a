import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  OvsdbConnectionError,
  OvsdbDisconnectedError,
  OvsdbMessageSizeError,
  OvsdbOptionError,
  OvsdbProtocolError,
} from '../../src/errors';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/ovsdb/framing';

type Behaviour = (socket: Socket, requests: AsyncIterable<{ id: unknown; method: string }>) => void | Promise<void>;

/**
 * A peer that is not a well-behaved ovsdb-server, on a real socket. It answers get_schema of
 * _Server with "unknown database" (a server before OVS 2.9), which is all qualification asks,
 * and hands the other requests to `behaviour`.
 */
class HostileServer {
  readonly connections: Socket[] = [];
  /** Bytes the peer managed to write, per connection. */
  readonly written: number[] = [];
  private readonly server: Server;

  private constructor(
    server: Server,
    readonly remote: string,
  ) {
    this.server = server;
  }

  static async start(kind: 'unix' | 'tcp', behaviour: Behaviour, path?: string): Promise<HostileServer> {
    // eslint-disable-next-line prefer-const -- assigned once the server listens; read by its connection callback
    let hostile!: HostileServer;
    const server = createServer((socket) => {
      const index = hostile.connections.push(socket) - 1;
      hostile.written[index] = 0;
      const write = socket.write.bind(socket);
      socket.write = (chunk: string | Uint8Array, ...rest: never[]) => {
        hostile.written[index]! += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        return write(chunk, ...rest);
      };
      socket.on('error', () => undefined);
      // The client hanging up mid-behaviour is what these tests provoke.
      Promise.resolve(behaviour(socket, requests(socket))).catch(() => socket.destroy());
    });
    await new Promise<void>((resolve) => (kind === 'unix' ? server.listen(path!, resolve) : server.listen(0, '127.0.0.1', resolve)));
    const address = server.address();
    hostile = new HostileServer(server, kind === 'unix' ? `unix:${path}` : `tcp:127.0.0.1:${(address as { port: number }).port}`);
    return hostile;
  }

  async stop(): Promise<void> {
    for (const socket of this.connections) {
      socket.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The requests a client sends, as parsed JSON (the client writes one JSON text per request). */
async function* requests(socket: Socket): AsyncIterable<{ id: unknown; method: string }> {
  let buffered = '';
  for await (const chunk of socket) {
    buffered += String(chunk);
    for (;;) {
      const end = endOfObject(buffered);
      if (end < 0) break;
      const request = JSON.parse(buffered.slice(0, end)) as { id: unknown; method: string; params: unknown[] };
      buffered = buffered.slice(end);
      if (request.method === 'get_schema' && request.params[0] === '_Server') {
        socket.write(JSON.stringify({ id: request.id, result: null, error: 'unknown database' }));
        continue;
      }
      yield request;
    }
  }
}

function endOfObject(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return -1;
}

async function answerWith(socket: Socket, reply: (id: unknown) => string, stream: AsyncIterable<{ id: unknown }>): Promise<void> {
  for await (const request of stream) {
    socket.write(reply(request.id));
  }
}

/** Writes `{"id":ID,"result":"` and then 'a's until the peer goes away or `total` bytes are out. */
async function endlessString(socket: Socket, id: unknown, total: number): Promise<void> {
  socket.write(`{"id":${JSON.stringify(id)},"result":"`);
  const block = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < total && !socket.destroyed; sent += block.length) {
    if (!socket.write(block)) {
      await new Promise((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
    }
  }
}

describe('an OvsdbClient facing a peer that is not a well-behaved OVSDB server (real sockets)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-hostile-'));
  let hostile: HostileServer | undefined;
  const clients: OvsdbClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await hostile?.stop();
    hostile = undefined;
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['unix', 'tcp'] as const)('refuses garbage (an HTTP server on a %s remote), naming it, and keeps retrying', async (kind) => {
    hostile = await HostileServer.start(
      kind,
      (socket) => void socket.write('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'),
      join(dir, `http-${kind}.sock`),
    );
    const failure = OvsdbClient.connect(hostile.remote, { connectTimeoutMs: 1500, backoff: { initialMs: 50, maxMs: 100 } });
    await expect(failure).rejects.toBeInstanceOf(OvsdbConnectionError);
    await expect(failure).rejects.toThrow(
      new RegExp(`${hostile.remote.replace(/[.]/g, '\\.')}: .*outside any JSON object; check that the remote is an OVSDB server`),
    );
    expect(hostile.connections.length).toBeGreaterThan(2);
  });

  it.each(['unix', 'tcp'] as const)('gives up on a %s peer that accepts and never answers, within attemptTimeoutMs', async (kind) => {
    hostile = await HostileServer.start(kind, () => undefined, join(dir, `mute-${kind}.sock`));
    const failure = OvsdbClient.connect(hostile.remote, {
      attemptTimeoutMs: 300,
      connectTimeoutMs: 1500,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    await expect(failure).rejects.toThrow(`${hostile.remote} accepted the connection but did not answer within 300 ms`);
    expect(hostile.connections.length).toBeGreaterThan(1);
  });

  it('stops reading a never-ending message at maxMessageBytes, counts it, says what to do, and reconnects', async () => {
    const limit = 1024 * 1024;
    hostile = await HostileServer.start('tcp', async (socket, stream) => {
      for await (const request of stream) {
        // 1 GiB announced: a string that does not end.
        await endlessString(socket, request.id, 1024 ** 3);
      }
    });
    const client = await OvsdbClient.connect(hostile.remote, { maxMessageBytes: limit, backoff: { initialMs: 50, maxMs: 100 } });
    clients.push(client);
    const statuses: OvsdbStatus[] = [];
    client.on('status', (status) => statuses.push(status));
    const failure = await client.listDatabases().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OvsdbDisconnectedError);
    expect((failure as Error).cause).toBeInstanceOf(OvsdbMessageSizeError);
    const disconnected = statuses.find((status) => status.state === 'disconnected') as { error: Error };
    expect(disconnected.error).toBeInstanceOf(OvsdbMessageSizeError);
    expect(disconnected.error).toMatchObject({
      code: 'OVSDB_MESSAGE_SIZE',
      limit,
      message: expect.stringContaining('raise options.maxMessageBytes'),
    });
    expect(client.stats.oversizedMessages).toBe(1);
    // What the client read before it stopped is bounded by the limit (plus what sat in socket buffers).
    expect(hostile.written[0]).toBeLessThan(limit + 16 * 1024 * 1024);
    await expect.poll(() => client.stats.sessions).toBe(2);
  });

  it('has a default message size limit, and refuses limits it cannot honour', async () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(256 * 1024 * 1024);
    await expect(OvsdbClient.connect('tcp:127.0.0.1:1', { maxMessageBytes: 2 ** 31 })).rejects.toBeInstanceOf(OvsdbOptionError);
    await expect(OvsdbClient.connect('tcp:127.0.0.1:1', { maxMessageBytes: 0 })).rejects.toBeInstanceOf(OvsdbOptionError);
  });

  it('drops a tcp peer that sends only whitespace after the handshake: no sign of life', async () => {
    hostile = await HostileServer.start('tcp', async (socket, stream) => {
      for await (const request of stream) {
        void request;
        const timer = setInterval(() => socket.write('  \n'), 20);
        socket.once('close', () => clearInterval(timer));
      }
    });
    const client = await OvsdbClient.connect(hostile.remote, {
      inactivityProbeMs: 200,
      inactivityTimeoutMs: 600,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    clients.push(client);
    const dropped = new Promise<OvsdbStatus>((resolve) =>
      client.on('status', (status) => status.state === 'disconnected' && resolve(status)),
    );
    void client.listDatabases().catch(() => undefined);
    expect(await dropped).toMatchObject({ error: expect.objectContaining({ message: expect.stringContaining('sent nothing for') }) });
  });

  it('treats a reply that is not JSON-RPC as a protocol error of that request, not a crash', async () => {
    hostile = await HostileServer.start(
      'unix',
      (socket, stream) => answerWith(socket, (id) => JSON.stringify({ id, result: 'not a list', error: null }), stream),
      join(dir, 'odd.sock'),
    );
    const client = await OvsdbClient.connect(hostile.remote);
    clients.push(client);
    await expect(client.listDatabases()).rejects.toBeInstanceOf(OvsdbProtocolError);
    await expect(client.transact('OVN_Northbound', [])).rejects.toBeInstanceOf(OvsdbProtocolError);
    expect(client.connected).toBe(true);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcSession } from '../../src/ovsdb/json-rpc';

/**
 * ovsdb-server cannot be made to put a chosen message right behind the one that ends a session in
 * a single read, so the peer here is a plain socket writing exactly those bytes in one write.
 */
describe('JsonRpcSession over a real unix socket', () => {
  let server: Server | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-json-rpc-'));

  afterEach(async () => {
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function connectedPair(path: string): Promise<{ client: Socket; peer: Socket }> {
    const accepted = new Promise<Socket>((resolve) => {
      server = createServer(resolve);
      server.listen(path);
    });
    await new Promise((resolve) => server!.once('listening', resolve));
    const client = connect(path);
    await new Promise((resolve) => client.once('connect', resolve));
    return { client, peer: await accepted };
  }

  it('ignores what follows, in the same read, the message that ended the session', async () => {
    const { client, peer } = await connectedPair(join(dir, 'peer.sock'));
    const notifications: string[] = [];
    const anomalies: Error[] = [];
    const session: JsonRpcSession = new JsonRpcSession(
      client,
      {
        onNotification: (method) => {
          notifications.push(method);
          session.close();
        },
        onAnomaly: (error) => anomalies.push(error),
        onClose: () => undefined,
      },
      { probeMs: 0, timeoutMs: 0 },
    );
    const closed = new Promise((resolve) => client.once('close', resolve));
    peer.write(
      '{"method":"update3","params":["m",null,{}],"id":null}{"method":"update3","params":["m",null,{}],"id":null}{"id":99,"result":[],"error":null}',
    );
    await closed;
    peer.destroy();
    expect(notifications).toEqual(['update3']);
    expect(anomalies).toEqual([]);
  });
});

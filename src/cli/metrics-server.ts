import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { CliUsageError } from './errors';
import { wholeNumber } from './parse';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** HOST:PORT, [IPv6]:PORT or :PORT (all addresses). */
export function parseListenAddress(value: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  if (match === null) throw new CliUsageError(`--metrics ${value}: give HOST:PORT, [IPV6]:PORT or :PORT`);
  return { host: match[1] ?? (match[2] === '' ? '::' : match[2]!), port: wholeNumber('--metrics port', match[3]!, 0, 65535) };
}

/** Serves the registry on GET /metrics, the exposition format Prometheus scrapes. */
export async function serveMetrics(registry: Registry, address: ListenAddress): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '/').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('ovn-psample serves /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

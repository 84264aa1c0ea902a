import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import type { Registry } from 'prom-client';
import { CliUsageError, MetricsListenError } from './errors';
import { wholeNumber } from './parse';
import type { ReadinessState } from './readiness';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** RFC 1123 host names: what getaddrinfo could ever resolve. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** HOST:PORT, [IPv6]:PORT or :PORT (all addresses). */
export function parseListenAddress(value: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  if (match === null) throw new CliUsageError(`--metrics ${value}: give HOST:PORT, [IPV6]:PORT or :PORT`);
  const host = match[1] ?? (match[2] === '' ? '::' : match[2]!);
  if (match[1] !== undefined ? isIP(host) !== 6 : isIP(host) === 0 && !HOST_NAME.test(host)) {
    const reference = /\$\(([A-Za-z_][A-Za-z0-9_]*)\)/.exec(host);
    throw new CliUsageError(
      reference === null
        ? `--metrics ${value}: ${host} is neither an IP address nor a host name: give HOST:PORT, [IPV6]:PORT or :PORT`
        : `--metrics ${value}: $(${reference[1]}) was not expanded: Kubernetes expands $(VAR) in args only for a variable the container's env defines before it ` +
            `(env: [{name: ${reference[1]}, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}]); define it, or give the address itself`,
    );
  }
  return { host, port: wholeNumber('--metrics port', match[3]!, 0, 65535) };
}

export interface HealthSource {
  state(): ReadinessState;
}

/**
 * Serves the registry on GET /metrics (what Prometheus scrapes), /healthz (alive: the process
 * answers) and /readyz (200 once the watch is ready, else 503 with why), for a kubelet's probes.
 * Listens before the watch changes anything, so a wrong address is found first.
 */
export async function serveMetrics(registry: Registry, address: ListenAddress, health: HealthSource): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405, { 'content-type': 'text/plain', allow: 'GET' }).end('GET only\n');
    } else if (path === '/metrics') {
      registry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
      );
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const state = health.state();
      response
        .writeHead(state.ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(state.ready ? 'ready\n' : `not ready: ${state.reasons.join('; ')}\n`);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('ovn-psample serves /metrics, /healthz and /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(listenError(error, address));
    server.once('error', failed);
    server.listen(address.port, address.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return server;
}

function listenError(error: NodeJS.ErrnoException, address: ListenAddress): Error {
  const where = `--metrics ${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  switch (error.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliUsageError(`${where}: ${address.host} does not resolve to an address of this host: give an IP address`);
    case 'EADDRNOTAVAIL':
      return new CliUsageError(`${where}: ${address.host} is not an address of this host: give one of its addresses, or :PORT for all`);
    case 'EADDRINUSE':
      return new MetricsListenError(`${where}: the port is in use by another process: pick another port`, { cause: error });
    case 'EACCES':
      return new MetricsListenError(`${where}: binding a port below 1024 needs CAP_NET_BIND_SERVICE: pick a port from 1024 up`, {
        cause: error,
      });
    default:
      return new MetricsListenError(`${where}: cannot listen (${error.message})`, { cause: error });
  }
}

import { expect, it } from 'vitest';
import { encodePsample } from '../../src/index';
import { fileNetns } from '../support/netns';
import { injectedSourceArgs, jsonLines, startCli, type CliProcess } from '../support/cli';
import { icmpEcho } from './support/frames';
import { cookieOf, PODS, useOvnkNode } from './support/ovnk-node';

// The NB and SB of the node listen on ssl: with one PKI, as ovn-kubernetes' central databases do.
const ns = fileNetns('ovnps-cli-watch-ssl');
const GROUP = 14;
const PSAMPLE_GROUP = 42;
const node = useOvnkNode(ns, GROUP, { ssl: true });

/** watch on the node's ssl: remotes, with `credentials` (--private-key, --certificate, --ca-cert). */
function watch(credentials: readonly string[], args: readonly string[] = []): CliProcess {
  const remotes = ['--nb', node.dbs.nb.sslRemote, '--sb', node.dbs.sb.sslRemote];
  return startCli(injectedSourceArgs('watch', ns.name, GROUP, ['--group', String(PSAMPLE_GROUP), ...remotes, ...credentials, ...args]));
}

it('watch decodes through ssl: NB and SB with the credentials named as ovn-nbctl names them', async () => {
  const pki = node.dbs.pki!;
  const run = watch(
    ['--private-key', pki.clientKey, '--certificate', pki.clientCert, '--ca-cert', pki.caCert],
    ['--format', 'json', '--count', '1'],
  );
  await run.listening;
  node.injector.send(
    encodePsample({
      group: PSAMPLE_GROUP,
      proto: 0x800,
      iifindex: 1,
      data: icmpEcho({ src: PODS.frontend.ip, dst: PODS.backend.ip, seq: 1 }),
      userCookie: cookieOf('allowFrontend'),
    }),
  );
  expect(await run.exited).toBe(0);
  const [event, ...more] = jsonLines(run.stdout());
  expect(more).toEqual([]);
  expect(event).toMatchObject({
    verdict: 'allow',
    message: 'Allowed by network policy allow-frontend in namespace shop',
    src: { kind: 'pod', namespace: 'shop', name: 'frontend' },
    dst: { kind: 'pod', namespace: 'shop', name: 'backend' },
  });
});

it('refuses ssl: remotes without all three credentials (exit 2), and names a CA that does not sign the server (exit 1)', async () => {
  const pki = node.dbs.pki!;
  const partial = watch(['--private-key', pki.clientKey]);
  expect(await partial.exited).toBe(2);
  expect(partial.stderr()).toMatch(/ssl: remotes need all three of --private-key, --certificate and --ca-cert/);
  // The last --log-format wins: text, whose error line ends with the code.
  const stranger = watch(
    ['--private-key', pki.clientKey, '--certificate', pki.clientCert, '--ca-cert', pki.otherCaCert],
    ['--log-format', 'text'],
  );
  expect(await stranger.exited).toBe(1);
  expect(stranger.stderr()).toMatch(/ssl:127\.0\.0\.1:\d+: .*certificate chain ends at a CA other than .*\[OVSDB_CONNECTION\]/);
});

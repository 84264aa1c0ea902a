import { execFileSync } from 'node:child_process';
import { linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createInjector, encodePsample, type PsampleInjector } from '../../src/index';
import { startNodeOvs, type NodeOvs } from '../ovs/support/ovs-database';
import { freePort } from '../support/ovsdb-server';
import { debianTool } from '../support/debian-tool';
import { tcpSyn } from '../cli/support/frames';
import { podman, podmanLogs, projectImage } from '../support/podman';
import { daemonSetPod } from './support/daemonset-pod';

// The image as a node runs it: host network, NET_ADMIN its only capability, a read-only root, the
// node's OVS database socket mounted from a real ovsdb-server on OVS 3.5's schema. The host has no
// psample, so samples are injected on NETLINK_USERSOCK in the host's network namespace (the
// container shares it) and read with --source.
const GROUP = 29;
// Containers start slowly on a busy machine (npm test runs two test files at a time).
vi.setConfig({ testTimeout: 300_000 });
const COOKIE = Uint8Array.from(Buffer.from('0100000100000001', 'hex'));

let image: string;
let node: NodeOvs;
let ovsDir: string;
let injector: PsampleInjector;
const containers = new Set<string>();

beforeAll(async () => {
  image = await projectImage();
  node = await startNodeOvs({ psample: 'true' });
  // The node's /var/run/openvswitch: db.sock is the test server's socket (a hard link to it).
  ovsDir = mkdtempSync(path.join(os.tmpdir(), 'ovnps-node-ovs-'));
  linkSync(node.server.unixPath, path.join(ovsDir, 'db.sock'));
  injector = createInjector({ protocol: 'usersock', groupId: GROUP });
}, 120_000);

afterAll(async () => {
  for (const name of containers) await podman('rm', '--force', '--time', '0', name).catch(() => undefined);
  injector?.close();
  await node?.stop();
  rmSync(ovsDir, { recursive: true, force: true });
});

afterEach(async () => {
  for (const row of await node.collectorSetRows()) await node.deleteCollectorSet(row._uuid);
});

interface Pod {
  readonly name: string;
  readonly port: number;
  /** The container's main process, as the host sees it. */
  hostPid(): Promise<number>;
  exitCode(): Promise<number>;
}

async function startPod(extra: readonly string[] = []): Promise<Pod> {
  const port = await freePort();
  const name = `ovnps-test-${process.pid}-${containers.size}`;
  containers.add(name);
  await podman(
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    '--user',
    '0:0',
    '--cap-drop',
    'all',
    '--cap-add',
    'net_admin',
    '--security-opt',
    'no-new-privileges',
    '--read-only',
    '--volume',
    `${ovsDir}:/var/run/openvswitch:ro`,
    image,
    'watch',
    '--add-ovs-collector',
    '--drop-privileges',
    '--source',
    `usersock:34:${GROUP}`,
    '--no-enrich',
    '--format',
    'json',
    '--log-format',
    'json',
    '--metrics',
    `127.0.0.1:${port}`,
    ...extra,
  );
  return {
    name,
    port,
    hostPid: async () => Number((await podman('inspect', '--format', '{{.State.Pid}}', name)).trim()),
    exitCode: async () => Number((await podman('wait', name)).trim()),
  };
}

async function get(port: number, url: string): Promise<[number, string]> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${url}`);
    return [response.status, await response.text()];
  } catch {
    return [0, ''];
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const ready = (pod: Pod): Promise<string> =>
  until('/readyz to turn ready', async () => {
    const [status, body] = await get(pod.port, '/readyz');
    return status === 200 ? body : undefined;
  });

describe('npm run image', () => {
  it('exports one OCI archive whose index holds linux/amd64 and linux/arm64, each at most 150 MB, with its labels, user, entrypoint and no shell', async () => {
    const version = image.split(':')[1]!.replace(/-amd64$/, '');
    const archive = path.join(__dirname, '..', '..', '.image', `ovn-psample-${version}.oci.tar`);
    const blob = (digest: string): Record<string, unknown> =>
      JSON.parse(execFileSync('tar', ['-xOf', archive, `blobs/sha256/${digest.slice('sha256:'.length)}`], { encoding: 'utf8' })) as Record<
        string,
        unknown
      >;
    const index = JSON.parse(execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8' })) as {
      manifests: { digest: string }[];
    };
    const list = blob(index.manifests[0]!.digest) as { manifests: { platform: { os: string; architecture: string } }[] };
    expect(list.manifests.map((manifest) => `${manifest.platform.os}/${manifest.platform.architecture}`).sort()).toEqual([
      'linux/amd64',
      'linux/arm64',
    ]);
    for (const arch of ['amd64', 'arm64']) {
      const tag = image.replace(/-amd64$/, `-${arch}`);
      const [size, config] = (await podman('image', 'inspect', '--format', '{{.Size}}\t{{json .Config}}', tag)).trim().split('\t');
      expect(Number(size)).toBeLessThanOrEqual(150_000_000);
      expect(JSON.parse(config!)).toMatchObject({
        User: '65534:65534',
        Entrypoint: ['ovn-psample'],
        Labels: {
          'org.opencontainers.image.version': version,
          'org.opencontainers.image.licenses': 'Apache-2.0',
          'org.opencontainers.image.source': expect.any(String),
          'org.opencontainers.image.revision': expect.any(String),
        },
      });
    }
    // No shell: a container cannot run one.
    await expect(podman('run', '--rm', '--entrypoint', '/bin/sh', image, '-c', 'true')).rejects.toThrow();
    expect((await podman('run', '--rm', image, '--version')).trim()).toBe(version);
  });
});

describe('the image under podman: host network, NET_ADMIN alone, read-only root, the node OVS socket mounted', () => {
  it('turns ready, counts injected samples in its metrics, runs with NET_ADMIN alone then none, and removes its collector set at SIGTERM', async () => {
    const pod = await startPod();
    expect(await ready(pod)).toBe('ready\n');
    expect(await get(pod.port, '/healthz')).toEqual([200, 'ok\n']);
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({
        id: 42,
        local_group_id: 42,
        external_ids: expect.objectContaining({ owner: 'ovn-psample', 'ovn-psample-pid': '1' }),
      }),
    ]);
    // --drop-privileges: once joined, no capability is left in any set but the bounding set, which holds NET_ADMIN alone.
    const status = readFileSync(`/proc/${await pod.hostPid()}/status`, 'latin1');
    expect(status).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(status).toMatch(/^CapBnd:\s+0000000000001000$/m);
    for (let seq = 0; seq < 5; seq++)
      injector.send(encodePsample({ group: 42, groupSeq: seq, proto: 0x800, data: new Uint8Array(60), userCookie: COOKIE }));
    const samples = await until('the samples in the metrics', async () => {
      const [, body] = await get(pod.port, '/metrics');
      const count = /^ovn_psample_samples_total\{group="42",app="[^"]*"\} (\d+)$/m.exec(body)?.[1];
      return count === '5' ? count : undefined;
    });
    expect(samples).toBe('5');
    await podman('kill', '--signal', 'TERM', pod.name);
    expect(await pod.exitCode()).toBe(0);
    const logs = await podmanLogs(pod.name);
    expect(logs).toMatch(/"msg":"removed Flow_Sample_Collector_Set 42 on br-int \(made by ovn-psample watch \(pid 1\)\)"/);
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('SIGKILL, then a new pod (pid 1 again, another pid namespace): the new pod takes the set over and removes it at SIGTERM', async () => {
    const killed = await startPod();
    await ready(killed);
    await podman('kill', '--signal', 'KILL', killed.name);
    await killed.exitCode();
    expect(await node.collectorSetRows()).toHaveLength(1);

    const next = await startPod();
    await ready(next);
    expect(await podmanLogs(next.name)).toMatch(
      /"msg":"took over Flow_Sample_Collector_Set 42 on br-int, psample group 42, from a watch that is gone \((pid 1 is this process now|process 1 of pid namespace \d+ has exited)\); it is removed at exit"/,
    );
    await podman('kill', '--signal', 'TERM', next.name);
    expect(await next.exitCode()).toBe(0);
    expect(await node.collectorSetRows()).toEqual([]);
  });
});

describe('the DaemonSet of deploy/overlays/ovn-kubernetes under podman kube play', () => {
  it("its pod template runs as a pod: NET_ADMIN alone, the overlay's mounts, ready, flow records on stdout, and its collector set removed when the pod goes down", async () => {
    const kustomize = await debianTool('trixie', 'kustomize', '5.6', '/usr/bin/kustomize');
    const rendered = execFileSync(kustomize, ['build', path.join(__dirname, '..', '..', 'deploy', 'overlays', 'ovn-kubernetes')], {
      encoding: 'utf8',
    });
    const port = await freePort();
    const ovnDir = mkdtempSync(path.join(os.tmpdir(), 'ovnps-node-ovn-'));
    // The host has no psample: samples come from --source.
    const { yaml, container, containerName } = daemonSetPod(rendered, {
      name: 'ovn-psample-test',
      image,
      metricsPort: port,
      extraArgs: ['--source', `usersock:34:${GROUP}`],
      hostPaths: { 'run-openvswitch': ovsDir, 'ovn-databases': ovnDir },
    });
    const file = path.join(ovnDir, '..', `ovnps-pod-${process.pid}.yaml`);
    writeFileSync(file, yaml);
    try {
      await podman('kube', 'play', file);
      const name = containerName;
      containers.add(name);
      const pod: Pod = {
        name,
        port,
        hostPid: async () => Number((await podman('inspect', '--format', '{{.State.Pid}}', name)).trim()),
        exitCode: async () => Number((await podman('wait', name)).trim()),
      };
      expect(await ready(pod)).toBe('ready\n');
      const status = readFileSync(`/proc/${await pod.hostPid()}/status`, 'latin1');
      expect(status).toMatch(/^CapBnd:\s+0000000000001000$/m);
      expect(status).toMatch(/^CapEff:\s+0000000000000000$/m);
      expect(await node.collectorSetRows()).toEqual([
        expect.objectContaining({ id: 42, external_ids: expect.objectContaining({ owner: 'ovn-psample' }) }),
      ]);
      expect(await podmanLogs(name)).toMatch(/no OVN northbound database on this node/);
      expect(container.args).toEqual(expect.arrayContaining(['--aggregate', '60']));
      // Three connections to port 8080, one to 9090, each sampled at 1/2: two flows, nothing per packet.
      const connection = (srcPort: number, dstPort: number, at: bigint): Uint8Array =>
        encodePsample({
          group: 42,
          proto: 0x800,
          data: tcpSyn({ src: '10.244.0.3', dst: '10.244.0.4', srcPort, dstPort }),
          userCookie: COOKIE,
          timestampNs: at,
          rate: 0x7fffffff,
          probability: true,
        });
      for (const [i, dstPort] of [8080, 8080, 8080, 9090].entries())
        injector.send(connection(40_000 + i, dstPort, BigInt(i + 1) * 1_000_000_000n));
      await until('the samples in the metrics', async () => {
        const [, body] = await get(port, '/metrics');
        return /^ovn_psample_samples_total\{group="42",app="[^"]*"\} 4$/m.test(body) ? true : undefined;
      });
      // What a kubelet does to a pod it deletes: SIGTERM, then the grace period.
      await podman('pod', 'stop', '--time', '30', 'ovn-psample-test');
      expect(await pod.exitCode()).toBe(0);
      const logs = await podmanLogs(name);
      expect(logs).toMatch(/"msg":"SIGTERM: stopping"/);
      // The minute so far, written at SIGTERM: a record per flow, then the interval's.
      const records = logs
        .split('\n')
        .filter((line) => line.startsWith('{"version":1,"type":'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records).toEqual([
        expect.objectContaining({
          type: 'flow',
          src: { ip: '10.244.0.3' },
          dst: { ip: '10.244.0.4' },
          protocol: 6,
          dstPort: 8080,
          sampledPackets: 3,
          packets: 6,
          chain: [expect.objectContaining({ cookie: '0100000100000001' })],
        }),
        expect.objectContaining({ type: 'flow', dstPort: 9090, sampledPackets: 1, packets: 2 }),
        expect.objectContaining({ type: 'interval', flows: 2, sampledPackets: 4, packets: 8 }),
      ]);
      expect(await node.collectorSetRows()).toEqual([]);
    } finally {
      await podman('kube', 'down', file).catch(() => undefined);
      rmSync(file, { force: true });
      rmSync(ovnDir, { recursive: true, force: true });
    }
  });
});

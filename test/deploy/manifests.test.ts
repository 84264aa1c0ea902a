import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { debianTool } from '../support/debian-tool';

const root = path.join(__dirname, '..', '..');
const load = createRequire(__filename);

/** What each overlay mounts as the node's NB/SB socket directory. */
const OVERLAYS = { openshift: '/var/run/ovn-ic', 'ovn-kubernetes': '/var/run/openvswitch', ovn: '/var/run/ovn' } as const;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

let kustomize: string;
beforeAll(async () => {
  kustomize = await debianTool('trixie', 'kustomize', '5.6', '/usr/bin/kustomize');
}, 180_000);

function render(overlay: string): K8sObject[] {
  const text = execFileSync(kustomize, ['build', path.join(root, 'deploy', 'overlays', overlay)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((document) => document.toJS() as K8sObject);
}

/** The model of an object's kind from kubernetes-models (the API's OpenAPI schema) or, for the ServiceMonitor CRD, the Prometheus Operator's. */
function model(object: K8sObject): { validate(): void } {
  const module =
    object.apiVersion === 'monitoring.coreos.com/v1'
      ? `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${object.kind}`
      : `kubernetes-models/${object.apiVersion.includes('/') ? object.apiVersion : `v1`}/${object.kind}`;
  const Kind = (load(module) as Record<string, new (data: unknown) => { validate(): void }>)[object.kind]!;
  return new Kind(object);
}

describe.each(Object.entries(OVERLAYS))('deploy/overlays/%s', (overlay, ovnDirectory) => {
  it('renders with kustomize, and every object validates against the Kubernetes (and Prometheus Operator) schema', () => {
    const objects = render(overlay);
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual(
      [
        'DaemonSet/ovn-psample',
        'Namespace/ovn-psample',
        'Service/ovn-psample-metrics',
        'ServiceAccount/ovn-psample',
        'ServiceMonitor/ovn-psample',
        ...(overlay === 'openshift' ? ['RoleBinding/ovn-psample-privileged-scc'] : []),
      ].sort(),
    );
    for (const object of objects) {
      expect(() => model(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
      if (object.kind !== 'Namespace') expect(object.metadata.namespace).toBe('ovn-psample');
    }
    expect(() => model({ ...daemonSet(objects), spec: { selector: 'wrong' } }).validate()).toThrow();
  });

  it(`runs the pod on the host network and pids, NET_ADMIN alone, read-only, seccomp RuntimeDefault, probes on /healthz and /readyz, NB/SB from ${ovnDirectory}`, () => {
    const objects = render(overlay);
    const pod = (daemonSet(objects).spec as { template: { spec: PodSpec } }).template.spec;
    expect(pod).toMatchObject({ hostNetwork: true, hostPID: true, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } });
    const [container] = pod.containers;
    expect(container!.securityContext).toEqual({
      runAsUser: 0,
      runAsGroup: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] },
    });
    expect(container!.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'metrics' } });
    expect(container!.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'metrics' } });
    expect(container!.resources).toMatchObject({
      requests: { cpu: expect.any(String), memory: expect.any(String) },
      limits: { memory: expect.any(String) },
    });
    // Kubernetes expands $(VAR) in args only for variables the container's env defines.
    const references = container!.args.flatMap((arg) => [...arg.matchAll(/\$\(([A-Z_]+)\)/g)].map((match) => match[1]));
    expect(references).toEqual(['HOST_IP']);
    expect(container!.env.map((variable) => variable.name)).toEqual(expect.arrayContaining(references));
    const volumes = Object.fromEntries(pod.volumes.map((volume) => [volume.name, volume.hostPath.path]));
    expect(volumes).toEqual({ 'run-openvswitch': '/var/run/openvswitch', 'ovn-databases': ovnDirectory });
    expect(container!.volumeMounts).toEqual([
      { name: 'run-openvswitch', mountPath: '/var/run/openvswitch', readOnly: true },
      { name: 'ovn-databases', mountPath: '/var/run/ovn', readOnly: true },
    ]);
    const namespace = objects.find((object) => object.kind === 'Namespace')!;
    expect(namespace.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'privileged' });
    const service = objects.find((object) => object.kind === 'Service')!;
    expect(service.spec).toMatchObject({ clusterIP: 'None', ports: [{ name: 'metrics', port: 9479, targetPort: 'metrics' }] });
  });
});

interface PodSpec {
  containers: {
    args: string[];
    env: { name: string }[];
    securityContext: unknown;
    livenessProbe: unknown;
    readinessProbe: unknown;
    resources: unknown;
    volumeMounts: unknown[];
  }[];
  volumes: { name: string; hostPath: { path: string } }[];
}

function daemonSet(objects: K8sObject[]): K8sObject {
  return objects.find((object) => object.kind === 'DaemonSet')!;
}

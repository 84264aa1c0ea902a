import { parseAllDocuments, stringify } from 'yaml';

export interface DaemonSetContainer {
  name: string;
  image: string;
  args: string[];
  env?: unknown;
  ports?: unknown;
  livenessProbe?: { httpGet: { port: unknown } };
  readinessProbe?: { httpGet: { port: unknown } };
  startupProbe?: { httpGet: { port: unknown } };
}

export interface DaemonSetPodSpec {
  containers: DaemonSetContainer[];
  volumes: { name: string; hostPath: { path: string } }[];
  priorityClassName?: string;
  hostPID?: boolean;
}

export interface DaemonSetPod {
  /** The Pod manifest for `podman kube play`. */
  readonly yaml: string;
  readonly spec: DaemonSetPodSpec;
  /** The ovn-psample container's spec, as the pod runs it. */
  readonly container: DaemonSetContainer;
  /** What podman names that container. */
  readonly containerName: string;
}

export interface DaemonSetPodOptions {
  readonly name: string;
  readonly image: string;
  /** The metrics and probe port: where $(HOST_IP):9479 would be (the kubelet would fill HOST_IP in). */
  readonly metricsPort: number;
  readonly extraArgs?: readonly string[];
  /** hostPath per volume name, where the test's node keeps its sockets elsewhere than the overlay says. */
  readonly hostPaths?: Readonly<Record<string, string>>;
}

/**
 * The DaemonSet of a `kustomize build` of deploy/ as the Pod `podman kube play` runs, with what a
 * kubelet does and podman cannot done here: the downward API ($(HOST_IP) in the args becomes the
 * loopback), port declarations under host networking and named probe ports (the probes get the
 * number), priority classes. Everything else (host network and pid, capabilities, read-only root,
 * seccomp, the mounts) is the template's own.
 */
export function daemonSetPod(rendered: string, options: DaemonSetPodOptions): DaemonSetPod {
  const daemonSet = parseAllDocuments(rendered)
    .map((document) => document.toJS() as { kind: string; spec: { template: { spec: DaemonSetPodSpec } } })
    .find((object) => object.kind === 'DaemonSet');
  if (daemonSet === undefined) throw new Error('the rendered manifests hold no DaemonSet');
  const spec = structuredClone(daemonSet.spec.template.spec);
  const container = spec.containers[0]!;
  container.image = options.image;
  container.args = [
    ...container.args.map((arg) => arg.replace('$(HOST_IP):9479', `127.0.0.1:${options.metricsPort}`)),
    ...(options.extraArgs ?? []),
  ];
  delete container.env;
  delete container.ports;
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe])
    if (probe !== undefined) probe.httpGet.port = options.metricsPort;
  delete spec.priorityClassName;
  for (const volume of spec.volumes) volume.hostPath.path = options.hostPaths?.[volume.name] ?? volume.hostPath.path;
  const yaml = stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: options.name, labels: { app: 'ovn-psample' } }, spec });
  return { yaml, spec, container, containerName: `${options.name}-${container.name}` };
}

import { run } from './shell';

export interface NetnsEnd {
  netns: string;
  dev: string;
  ip: string;
}

/** Two network namespaces joined by a veth pair, addressed PREFIX.1/24 and PREFIX.2/24, IPv6 off (no stray samples). */
export function createNetnsPair(name: string, prefix: string): [NetnsEnd, NetnsEnd] {
  const a: NetnsEnd = { netns: `${name}0`, dev: `${name}-a`, ip: `${prefix}.1` };
  const b: NetnsEnd = { netns: `${name}1`, dev: `${name}-b`, ip: `${prefix}.2` };
  for (const end of [a, b]) {
    run('ip', ['netns', 'add', end.netns]);
    run('ip', ['netns', 'exec', end.netns, 'sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1']);
    run('ip', ['netns', 'exec', end.netns, 'sysctl', '-q', '-w', 'net.ipv6.conf.default.disable_ipv6=1']);
    run('ip', ['-n', end.netns, 'link', 'set', 'lo', 'up']);
  }
  run('ip', ['link', 'add', a.dev, 'netns', a.netns, 'type', 'veth', 'peer', 'name', b.dev, 'netns', b.netns]);
  for (const end of [a, b]) {
    run('ip', ['-n', end.netns, 'addr', 'add', `${end.ip}/24`, 'dev', end.dev]);
    run('ip', ['-n', end.netns, 'link', 'set', end.dev, 'up']);
  }
  return [a, b];
}

export function deleteNetns(...names: string[]): void {
  for (const name of names) run('ip', ['netns', 'del', name]);
}

/** The interface index psample reports (IIFINDEX/OIFINDEX) for DEV, as seen in NETNS ('' = the root namespace). */
export function ifindexOf(netns: string, dev: string): number {
  const args = netns === '' ? ['-j', 'link', 'show', 'dev', dev] : ['-n', netns, '-j', 'link', 'show', 'dev', dev];
  const [link] = JSON.parse(run('ip', args)) as { ifindex: number }[];
  if (link === undefined) throw new Error(`no interface ${dev} in netns '${netns}'`);
  return link.ifindex;
}

export function macOf(netns: string, dev: string): string {
  const [link] = JSON.parse(run('ip', ['-n', netns, '-j', 'link', 'show', 'dev', dev])) as { address: string }[];
  if (link === undefined) throw new Error(`no interface ${dev} in netns '${netns}'`);
  return link.address;
}

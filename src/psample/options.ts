import type { NativeReaderOptions } from '../native/binding';
import { InvalidOptionError } from './errors';
import type { OpenPsampleOptions } from './types';

const DEFAULT_RECEIVE_BUFFER = 32 * 1024 * 1024;
const DEFAULT_QUEUE_CAPACITY = 262_144;

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value) ?? typeof value}`);
  }
  return value;
}

function flag(name: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InvalidOptionError(`${name} must be true or false, got ${JSON.stringify(value) ?? typeof value}`);
  }
  return value ?? false;
}

/**
 * The file of the network namespace `netns` names: a path as it is, a pid's /proc/PID/ns/net, a
 * name's /run/netns/NAME (where `ip netns add` puts it). The addon opens what this says.
 */
export function netnsPath(netns: string | number | undefined): string | undefined {
  if (netns === undefined) return undefined;
  if (typeof netns === 'number') return `/proc/${integerIn('netns (pid)', netns, 1, 2 ** 22)}/ns/net`;
  if (typeof netns !== 'string' || netns === '' || netns.includes('\0')) {
    throw new InvalidOptionError('netns must be a name under /run/netns, a path, or a pid');
  }
  if (netns.includes('/')) return netns;
  return /^\d+$/.test(netns) ? `/proc/${netns}/ns/net` : `/run/netns/${netns}`;
}

/** Checks user options and fills defaults, so the addon only ever sees well-typed values. */
export function nativeReaderOptions(options: OpenPsampleOptions): NativeReaderOptions {
  const groups = options.groups?.map((g, i) => integerIn(`groups[${i}]`, g, 0, 2 ** 32 - 1));
  const source = options.source;
  if (source && source.protocol !== 'usersock' && source.protocol !== 'generic') {
    throw new InvalidOptionError("source.protocol must be 'usersock' or 'generic'");
  }
  if (source && options.config) {
    throw new InvalidOptionError('config: group events come from the kernel psample family; an injection source has none');
  }
  return {
    protocol: source?.protocol ?? 'kernel',
    familyId: source ? integerIn('source.familyId', source.familyId, 16, 0xffff) : undefined,
    groupId: source ? integerIn('source.groupId', source.groupId, 1, source.protocol === 'usersock' ? 32 : 2 ** 32 - 1) : undefined,
    netns: netnsPath(options.netns),
    groups,
    config: flag('config', options.config),
    listenAllNsid: flag('listenAllNsid', options.listenAllNsid),
    receiveBufferBytes: integerIn('receiveBufferBytes', options.receiveBufferBytes ?? DEFAULT_RECEIVE_BUFFER, 4096, 2 ** 31 - 1),
    queueCapacity: integerIn('queueCapacity', options.queueCapacity ?? DEFAULT_QUEUE_CAPACITY, 1, 2 ** 31 - 1),
    deliveryIntervalUs:
      options.deliveryIntervalMs === undefined ? undefined : integerIn('deliveryIntervalMs', options.deliveryIntervalMs, 1, 1000) * 1000,
  };
}

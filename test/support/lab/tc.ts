import { loadModules } from './kernel';
import { runInNetns } from './shell';

// tc's sample action on a device inside a namespace: the lab's way to make the kernel's psample
// family send samples without Open vSwitch.

/** A device in a namespace: a NetnsEnd (netns.ts), or another device in its namespace. */
export interface Device {
  readonly netns: string;
  readonly dev: string;
}

/** What sampling with tc on a veth needs (psample, act_sample, matchall, the clsact qdisc, veth), and `more`. */
export function loadTcSampleModules(...more: string[]): void {
  loadModules('psample', 'act_sample', 'cls_matchall', 'sch_ingress', 'veth', ...more);
}

/** The clsact qdisc, that ingress and egress filters attach to. */
export function addClsact({ netns, dev }: Device): void {
  runInNetns(netns, 'tc', ['qdisc', 'add', 'dev', dev, 'clsact']);
}

/**
 * Deletes the clsact qdisc, and with it every filter, their sample actions (which hold act_sample,
 * which holds psample) and their psample groups.
 */
export function deleteClsact({ netns, dev }: Device): void {
  runInNetns(netns, 'tc', ['qdisc', 'del', 'dev', dev, 'clsact']);
}

export interface SampleFilter {
  direction?: 'ingress' | 'egress';
  /** The filter's priority, to delete it alone (deleteFilter); tc picks one otherwise. */
  pref?: number;
  /** Only packets of this protocol ('ip'); every packet otherwise. */
  protocol?: string;
  /** The sample action's arguments: rate, group, trunc, cookie. */
  action: readonly string[];
}

/** A matchall filter whose action samples what it matches; the psample group is made with it. */
export function addSampleFilter({ netns, dev }: Device, { direction = 'ingress', pref, protocol, action }: SampleFilter): void {
  runInNetns(netns, 'tc', [
    'filter',
    'add',
    'dev',
    dev,
    direction,
    ...(pref === undefined ? [] : ['pref', String(pref)]),
    ...(protocol === undefined ? [] : ['protocol', protocol]),
    'matchall',
    'action',
    'sample',
    ...action,
  ]);
}

export function deleteFilter({ netns, dev }: Device, direction: 'ingress' | 'egress', pref: number): void {
  runInNetns(netns, 'tc', ['filter', 'del', 'dev', dev, direction, 'pref', String(pref)]);
}

/** The sample action's arguments for every packet into psample group `group`. */
export const everyPacketTo = (group: number): string[] => ['rate', '1', 'group', String(group)];

/** A clsact qdisc on `device` and a filter sampling every IP packet it receives into psample group `group`. */
export function sampleIngress(device: Device, group: number): void {
  addClsact(device);
  addSampleFilter(device, { protocol: 'ip', action: everyPacketTo(group) });
}

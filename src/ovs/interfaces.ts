import { stringColumn } from '../ovn/row-values';
import type { LocalOvs } from './local-ovs';

/** The name of the OVS Interface with this kernel ifindex: the datapath port a sample came in on. */
export function ovsInterfaceName(ovs: LocalOvs, ifindex: number): string | undefined {
  const row = ovs.cache.table('Interface').lookup('ifindex', ifindex)[0];
  return row === undefined ? undefined : stringColumn(row, 'name');
}

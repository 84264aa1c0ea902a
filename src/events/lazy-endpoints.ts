import type { Endpoint } from '../ovn/endpoint';
import type { OvnDatapathInfo } from '../ovn/event';
import type { PodDirectory } from '../ovn/pod-directory';
import type { PacketFields } from '../packet/fields';

/**
 * The endpoints of a packet or a flow, resolved when first read: a consumer that keys on addresses
 * (watch --aggregate) resolves a flow's once, and without a pod directory no address text is made
 * to find nothing. Resolved in the network of the datapath the packet was sampled on.
 */
export abstract class LazyEndpoints {
  abstract readonly fields: PacketFields;
  abstract readonly datapath: OvnDatapathInfo | undefined;
  abstract readonly pods: PodDirectory | undefined;
  #src: Endpoint | undefined | null = null;
  #dst: Endpoint | undefined | null = null;

  get src(): Endpoint | undefined {
    if (this.#src === null) this.#src = this.#endpoint(this.pods, 'src');
    return this.#src;
  }

  get dst(): Endpoint | undefined {
    if (this.#dst === null) this.#dst = this.#endpoint(this.pods, 'dst');
    return this.#dst;
  }

  #endpoint(pods: PodDirectory | undefined, side: 'src' | 'dst'): Endpoint | undefined {
    if (pods === undefined) return undefined;
    const address = this.fields[side];
    return address === undefined ? undefined : pods.resolve(this.datapath?.network, address);
  }
}

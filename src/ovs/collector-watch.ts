import { EventEmitter } from 'node:events';
import { findCollectorSet, type CollectorSetInfo } from './collector-set';
import type { LocalOvs } from './local-ovs';

export interface CollectorWatchEvents {
  /** The set is gone (deleted by its owner, ovnkube-observ at exit, an operator): samples stop. */
  vanished: [previous: CollectorSetInfo];
  /** A set with the watched id appeared on the bridge. */
  appeared: [current: CollectorSetInfo];
  /** The set was replaced or its psample group changed. */
  changed: [current: CollectorSetInfo, previous: CollectorSetInfo];
}

/**
 * Follows one collector set (id on a bridge) in the live OVS mirror. Judged once per database
 * update, so a set replaced within one transaction reads as 'changed', not vanished and back.
 */
export class CollectorWatch extends EventEmitter<CollectorWatchEvents> {
  private readonly ovs: LocalOvs;
  private readonly bridgeUuid: string;
  private readonly id: number;
  private current: CollectorSetInfo | undefined;
  private readonly onBatch = (): void => this.check();

  constructor(ovs: LocalOvs, bridgeUuid: string, id: number) {
    super();
    this.ovs = ovs;
    this.bridgeUuid = bridgeUuid;
    this.id = id;
    this.current = findCollectorSet(ovs, bridgeUuid, id);
    ovs.cache.on('batch', this.onBatch);
  }

  get set(): CollectorSetInfo | undefined {
    return this.current;
  }

  close(): void {
    this.ovs.cache.off('batch', this.onBatch);
  }

  private check(): void {
    const previous = this.current;
    const now = findCollectorSet(this.ovs, this.bridgeUuid, this.id);
    this.current = now;
    if (previous === undefined && now !== undefined) this.emit('appeared', now);
    else if (previous !== undefined && now === undefined) this.emit('vanished', previous);
    else if (previous !== undefined && now !== undefined && (previous.uuid !== now.uuid || previous.localGroupId !== now.localGroupId)) {
      this.emit('changed', now, previous);
    }
  }
}

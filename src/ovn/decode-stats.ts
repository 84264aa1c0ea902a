import type { OvnSampleEvent, OvnStaleReason, OvnUnknownReason } from './event';

export interface OvnDecoderStats {
  decoded: number;
  /** Samples whose ACL, Sample or logical flow is gone (or not there yet), per reason. */
  stale: Record<OvnStaleReason, number>;
  /** Samples that could not be read as OVN samples, per reason. */
  unknown: Record<OvnUnknownReason, number>;
  /** Samples whose datapath key no Datapath_Binding has (or decoded without the southbound database). */
  unresolvedDatapaths: number;
  /**
   * Times a mirrored database was reloaded from scratch on a live connection: its mirror met
   * updates that contradict it, or the database was converted to a new schema (also emitted as 'resync').
   */
  resyncs: number;
}

/** Counts every decoded sample by outcome, so that nothing a decoder rejects goes unnoticed. */
export class DecodeCounters {
  private decoded = 0;
  private unresolvedDatapaths = 0;
  private readonly stale: Record<OvnStaleReason, number> = { 'sample-not-found': 0, 'acl-not-found': 0, 'flow-not-found': 0 };
  private readonly unknown: Record<OvnUnknownReason, number> = {
    'not-ovn-cookie': 0,
    'unknown-app': 0,
    'no-southbound': 0,
    'not-synced': 0,
  };

  /** Counts `times` decodes that answered `event`. */
  count(event: OvnSampleEvent, times = 1): OvnSampleEvent {
    if (event.status === 'decoded') {
      this.decoded += times;
    } else if (event.status === 'stale') {
      this.stale[event.reason as OvnStaleReason] += times;
    } else {
      this.unknown[event.reason as OvnUnknownReason] += times;
    }
    // ovn-controller's own drops (an OpenFlow table, datapath key 0) name no datapath to resolve.
    if (
      event.datapath.switch === undefined &&
      event.datapath.router === undefined &&
      event.status !== 'unknown' &&
      event.openflowTable === undefined
    ) {
      this.unresolvedDatapaths += times;
    }
    return event;
  }

  snapshot(): Omit<OvnDecoderStats, 'resyncs'> {
    return {
      decoded: this.decoded,
      stale: { ...this.stale },
      unknown: { ...this.unknown },
      unresolvedDatapaths: this.unresolvedDatapaths,
    };
  }
}

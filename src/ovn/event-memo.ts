import type { OvnSampleEvent } from './event';

/** Past this many events the memo starts over: a stream of made-up cookies must not grow it without end. */
const MAX_EVENTS = 65_536;

/**
 * The events already resolved, by observation domain and point id: a sample stream names a few
 * cookies again and again, and each answer holds until the databases change (clear()).
 */
export class EventMemo {
  private readonly byDomain = new Map<number, Map<number, OvnSampleEvent>>();
  private size = 0;

  get(obsDomainId: number, obsPointId: number): OvnSampleEvent | undefined {
    return this.byDomain.get(obsDomainId)?.get(obsPointId);
  }

  set(obsDomainId: number, obsPointId: number, event: OvnSampleEvent): void {
    if (this.size >= MAX_EVENTS) this.clear();
    let points = this.byDomain.get(obsDomainId);
    if (points === undefined) {
      points = new Map();
      this.byDomain.set(obsDomainId, points);
    }
    points.set(obsPointId, event);
    this.size++;
  }

  clear(): void {
    // Map.clear() allocates a fresh table even when empty, and initial syncs change every row.
    if (this.size === 0) return;
    this.byDomain.clear();
    this.size = 0;
  }
}

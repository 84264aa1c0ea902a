import { packetsStoodFor } from './event-samples';
import { eventNamespace, policyText, sideText, type NetworkEvent } from './network-event';
import type { Verdict } from './verdict';

export type TopSort = 'rate' | 'last' | 'verdict' | 'namespace';

export interface TopRow {
  readonly verdict: Verdict;
  readonly policy: string;
  readonly namespace: string;
  readonly src: string;
  readonly dst: string;
  /** Packets in the window: those the sampled ones stand for (packetsStoodFor), not rounded. */
  readonly packets: number;
  /** Packets per second over the window (of the packets above). */
  readonly rate: number;
  /** When the last packet of the row was seen (ms since the epoch). */
  readonly lastSeenMs: number;
}

interface Tally {
  readonly verdict: Verdict;
  readonly policy: string;
  readonly namespace: string;
  readonly src: string;
  readonly dst: string;
  /** Packets (stood for) per second of the window, a ring indexed by second. */
  readonly buckets: number[];
  newestSecond: number;
  lastSeenMs: number;
}

const VERDICT_ORDER: Readonly<Record<Verdict, number>> = { drop: 0, reject: 1, pass: 2, allow: 3, unknown: 4 };

/**
 * The busiest (verdict, policy, namespace, source → destination) over a sliding window: the
 * current second and the `windowSeconds` whole seconds before it, one counter per second in each
 * row, so adding a packet is O(1) and a snapshot costs one pass over the rows. A sampled packet
 * counts the packets it stands for (1 at OVN-Kubernetes' probability 65535; 100 when sampled 1 in
 * 100), so rows compare traffic, not samples. Rates are the window's packets over `windowSeconds`.
 */
export class TopTable {
  private readonly rows = new Map<string, Tally>();
  private readonly slots: number;

  constructor(
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.slots = windowSeconds + 1;
  }

  add(event: NetworkEvent): void {
    const policy = policyText(event);
    const namespace = eventNamespace(event) ?? '-';
    const src = sideText(event, 'src');
    const dst = sideText(event, 'dst');
    const key = `${event.verdict}\u0000${policy}\u0000${namespace}\u0000${src}\u0000${dst}`;
    const nowMs = this.now();
    const second = Math.floor(nowMs / 1000);
    let tally = this.rows.get(key);
    if (tally === undefined) {
      tally = {
        verdict: event.verdict,
        policy,
        namespace,
        src,
        dst,
        buckets: new Array<number>(this.slots).fill(0),
        newestSecond: second,
        lastSeenMs: nowMs,
      };
      this.rows.set(key, tally);
    }
    this.advance(tally, second);
    tally.buckets[second % this.slots]! += packetsStoodFor(event);
    tally.lastSeenMs = nowMs;
  }

  /** The rows with packets in the window, sorted; rows idle for a whole window are forgotten. */
  snapshot(sort: TopSort): TopRow[] {
    const second = Math.floor(this.now() / 1000);
    const rows: TopRow[] = [];
    for (const [key, tally] of this.rows) {
      this.advance(tally, second);
      const packets = tally.buckets.reduce((a, b) => a + b, 0);
      if (packets === 0) {
        this.rows.delete(key);
        continue;
      }
      const { verdict, policy, namespace, src, dst, lastSeenMs } = tally;
      rows.push({ verdict, policy, namespace, src, dst, packets, rate: packets / this.windowSeconds, lastSeenMs });
    }
    const byRate = (a: TopRow, b: TopRow): number => b.packets - a.packets || b.lastSeenMs - a.lastSeenMs;
    const order: Record<TopSort, (a: TopRow, b: TopRow) => number> = {
      rate: byRate,
      last: (a, b) => b.lastSeenMs - a.lastSeenMs || byRate(a, b),
      verdict: (a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] || byRate(a, b),
      namespace: (a, b) => a.namespace.localeCompare(b.namespace) || byRate(a, b),
    };
    return rows.sort(order[sort]);
  }

  /** Zeroes the seconds that passed since the tally's newest one. */
  private advance(tally: Tally, second: number): void {
    const gap = Math.min(second - tally.newestSecond, this.slots);
    for (let i = 1; i <= gap; i++) tally.buckets[(tally.newestSecond + i) % this.slots] = 0;
    if (second > tally.newestSecond) tally.newestSecond = second;
  }
}

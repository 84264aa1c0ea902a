import { performance } from 'node:perf_hooks';

/** What the grouper needs of a sample: where it was taken, its bytes and its kernel time. */
export interface GroupableSample {
  readonly datapathKey: number;
  readonly data: Uint8Array;
  /** Kernel time in ns (or the arrival time where the kernel gives none). */
  readonly timestampNs: bigint;
}

interface Pending<T extends GroupableSample> {
  readonly first: T;
  readonly hash: number;
  readonly deadline: number;
  readonly members: T[];
}

function fnv1a(data: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) hash = Math.imul(hash ^ data[i]!, 0x01000193);
  return hash >>> 0;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Groups the samples OVN takes of one packet (an AdminNetworkPolicy pass, then the namespace
 * isolation drop; a from-lport then a to-lport ACL): the same bytes on the same datapath within
 * `windowMs` of the first. A group is handed on `windowMs` after its first sample arrived, in
 * arrival order. Packets that differ on the way (NAT, a router hop) stay apart.
 */
export class PacketGrouper<T extends GroupableSample> {
  private readonly windowMs: number;
  private readonly windowNs: bigint;
  private readonly onPacket: (members: T[]) => void;
  private readonly byHash = new Map<number, Pending<T>[]>();
  private readonly queue: Pending<T>[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.release(performance.now());
  };

  constructor(windowMs: number, onPacket: (members: T[]) => void) {
    this.windowMs = windowMs;
    this.windowNs = BigInt(Math.round(windowMs * 1e6));
    this.onPacket = onPacket;
  }

  push(sample: T): void {
    const hash = fnv1a(sample.data);
    const candidates = this.byHash.get(hash);
    if (candidates !== undefined) {
      for (const pending of candidates) {
        const { first } = pending;
        const gap = sample.timestampNs - first.timestampNs;
        if (
          first.datapathKey === sample.datapathKey &&
          gap <= this.windowNs &&
          gap >= -this.windowNs &&
          sameBytes(first.data, sample.data)
        ) {
          pending.members.push(sample);
          return;
        }
      }
    }
    const pending: Pending<T> = { first: sample, hash, deadline: performance.now() + this.windowMs, members: [sample] };
    if (candidates === undefined) this.byHash.set(hash, [pending]);
    else candidates.push(pending);
    this.queue.push(pending);
    this.timer ??= setTimeout(this.onTimer, this.windowMs).unref();
  }

  /** Hands on every group now (at exit, or before a snapshot). */
  flush(): void {
    this.release(Infinity);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  /** Hands on the groups due by `now`; a throwing onPacket neither loses the others nor stops the timer. */
  private release(now: number): void {
    let failure: { error: unknown } | undefined;
    while (this.head < this.queue.length && this.queue[this.head]!.deadline <= now) {
      const pending = this.queue[this.head++]!;
      const candidates = this.byHash.get(pending.hash)!;
      if (candidates.length === 1) this.byHash.delete(pending.hash);
      else candidates.splice(candidates.indexOf(pending), 1);
      try {
        this.onPacket(pending.members);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.head < this.queue.length && this.timer === undefined && now !== Infinity) {
      this.timer = setTimeout(this.onTimer, Math.max(0, this.queue[this.head]!.deadline - now)).unref();
    }
    if (failure !== undefined) throw failure.error;
  }
}

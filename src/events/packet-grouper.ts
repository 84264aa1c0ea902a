import { performance } from 'node:perf_hooks';

/**
 * A packet waiting for more of its samples: what the grouper compares a new sample with. Its
 * bytes are `length` bytes from `start` in `bytes` (a batch's buffer, or a sample's data), so a
 * sample is compared where it lies, without a view of its own.
 */
export interface PendingPacket {
  /** FNV-1a of the bytes (native/packet/packet_fields.h computes it with the packet's fields). */
  readonly hash: number;
  /** Where it was sampled: the OVN datapath key of its cookie, or -1 without one. */
  readonly datapathKey: number;
  /** The first sample's kernel time in ns (or its arrival time where the kernel gives none), as a number: the window is far coarser than its rounding. */
  readonly timeNs: number;
  readonly bytes: Uint8Array;
  readonly start: number;
  readonly length: number;
  /** When it is handed on (performance.now()): set by the grouper. */
  deadline: number;
  /** Whether it waits in the grouper for more samples: set by the grouper. */
  waiting: boolean;
  /** The packet that waits after it in its bucket: set by the grouper. */
  nextInBucket?: PendingPacket | undefined;
}

// The waiting packets are chained through themselves from a bucket array the grouper keeps, not
// held by a Map: a Map rehashes its table as packets come and go, and the old tables, once V8 has
// moved them to the old generation, keep every packet they held alive through each young
// collection until the next full one. Measured at 30,000 samples/s (the OVN shape, 3 per packet):
// 62-81 % of the young generation survived each collection and about 8 MB was promoted every 2 s,
// each time followed by a full collection (work for V8's helper threads) and heap that holds it.
/** Buckets at the start; doubled whenever more packets wait than there are buckets. */
const MIN_BUCKETS = 1024;
/** Released packets the queue keeps in front of its head before it moves the rest down. */
const QUEUE_SLACK = 1024;

function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/**
 * Groups the samples OVN takes of one packet (an AdminNetworkPolicy pass, then the namespace
 * isolation drop; a from-lport then a to-lport ACL): the same bytes on the same datapath within
 * `windowMs` of the first. A packet is handed on `windowMs` after its first sample arrived, in
 * arrival order. Packets that differ on the way (NAT, a router hop) stay apart. The caller keeps
 * what it needs of each sample in its pending packet: the grouper makes nothing per sample.
 */
export class PacketGrouper<P extends PendingPacket> {
  private readonly windowMs: number;
  private readonly onPacket: (packet: P) => void;
  private buckets: (P | undefined)[] = new Array<P | undefined>(MIN_BUCKETS).fill(undefined);
  private waitingCount = 0;
  /** Packets in arrival order; the slots before `head` are released and cleared. */
  private readonly queue: (P | undefined)[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.release(performance.now());
  };

  constructor(windowMs: number, onPacket: (packet: P) => void) {
    this.windowMs = windowMs;
    this.onPacket = onPacket;
  }

  /**
   * The pending packet a sample with these bytes, taken on `datapathKey` at `timeNs`, belongs to.
   * `sameBytes`: a pending packet known to carry these very bytes (the previous sample's, when the
   * decoder saw they repeat), which is then not compared again.
   */
  find(hash: number, datapathKey: number, timeNs: number, bytes: Uint8Array, start: number, length: number, sameBytes?: P): P | undefined {
    if (sameBytes?.waiting === true && this.near(sameBytes, datapathKey, timeNs)) return sameBytes;
    const buckets = this.buckets;
    for (let pending = buckets[hash & (buckets.length - 1)]; pending !== undefined; pending = pending.nextInBucket as P | undefined) {
      if (pending.hash === hash && this.matches(pending, datapathKey, timeNs, bytes, start, length)) return pending;
    }
    return undefined;
  }

  /**
   * Starts a packet: it is handed on `windowMs` from `now` (performance.now(); a caller adding
   * many packets at once reads the clock once), with whatever joined it by then.
   */
  add(packet: P, now = performance.now()): void {
    if (this.waitingCount >= this.buckets.length) this.growBuckets();
    this.chain(this.buckets, packet);
    this.waitingCount++;
    packet.waiting = true;
    packet.deadline = now + this.windowMs;
    this.queue.push(packet);
    this.timer ??= setTimeout(this.onTimer, this.windowMs).unref();
  }

  /** Hands on every packet now (at exit, or before a snapshot). */
  flush(): void {
    this.release(Infinity);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  private near(pending: P, datapathKey: number, timeNs: number): boolean {
    const gap = timeNs - pending.timeNs;
    return pending.datapathKey === datapathKey && gap <= this.windowMs * 1e6 && gap >= -this.windowMs * 1e6;
  }

  private matches(pending: P, datapathKey: number, timeNs: number, bytes: Uint8Array, start: number, length: number): boolean {
    return (
      pending.length === length && this.near(pending, datapathKey, timeNs) && sameBytes(pending.bytes, pending.start, bytes, start, length)
    );
  }

  /** Appends `packet` to its bucket's chain: the oldest of a bucket is found first. */
  private chain(buckets: (P | undefined)[], packet: P): void {
    packet.nextInBucket = undefined;
    const index = packet.hash & (buckets.length - 1);
    let last = buckets[index];
    if (last === undefined) {
      buckets[index] = packet;
      return;
    }
    while (last.nextInBucket !== undefined) last = last.nextInBucket as P;
    last.nextInBucket = packet;
  }

  /** Twice the buckets, each chain split in its order; the old array is cleared, so it holds no packet alive. */
  private growBuckets(): void {
    const old = this.buckets;
    const buckets = new Array<P | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < old.length; i++) {
      for (let pending = old[i]; pending !== undefined;) {
        const next = pending.nextInBucket as P | undefined;
        this.chain(buckets, pending);
        pending = next;
      }
    }
    old.fill(undefined);
    this.buckets = buckets;
  }

  private forget(packet: P): void {
    packet.waiting = false;
    this.waitingCount--;
    const buckets = this.buckets;
    const index = packet.hash & (buckets.length - 1);
    const next = packet.nextInBucket as P | undefined;
    packet.nextInBucket = undefined;
    let before = buckets[index];
    if (before === packet) {
      buckets[index] = next;
      return;
    }
    while (before!.nextInBucket !== packet) before = before!.nextInBucket as P;
    before!.nextInBucket = next;
  }

  /** Hands on the packets due by `now`; a throwing onPacket neither loses the others nor stops the timer. */
  private release(now: number): void {
    let failure: { error: unknown } | undefined;
    while (this.head < this.queue.length && this.queue[this.head]!.deadline <= now) {
      const packet = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      this.forget(packet);
      try {
        this.onPacket(packet);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > QUEUE_SLACK) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.head < this.queue.length && this.timer === undefined && now !== Infinity) {
      this.timer = setTimeout(this.onTimer, Math.max(0, this.queue[this.head]!.deadline - now)).unref();
    }
    if (failure !== undefined) throw failure.error;
  }
}

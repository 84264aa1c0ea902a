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
}

// Map keys that are small integers (31 bits under V8's pointer compression) are stored and hashed
// as they are; a 32-bit hash above them would be a heap number made for every lookup. Packets the
// shorter key no longer tells apart are told apart by their bytes, as any two of one hash are.
const keyOf = (hash: number): number => hash & 0x3fffffff;

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
  private readonly byHash = new Map<number, P | P[]>();
  private readonly queue: P[] = [];
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
    const candidates = this.byHash.get(keyOf(hash));
    if (candidates === undefined) return undefined;
    if (!Array.isArray(candidates)) return this.matches(candidates, datapathKey, timeNs, bytes, start, length) ? candidates : undefined;
    for (const pending of candidates) if (this.matches(pending, datapathKey, timeNs, bytes, start, length)) return pending;
    return undefined;
  }

  /**
   * Starts a packet: it is handed on `windowMs` from `now` (performance.now(); a caller adding
   * many packets at once reads the clock once), with whatever joined it by then.
   */
  add(packet: P, now = performance.now()): void {
    const key = keyOf(packet.hash);
    const candidates = this.byHash.get(key);
    if (candidates === undefined) this.byHash.set(key, packet);
    else if (Array.isArray(candidates)) candidates.push(packet);
    else this.byHash.set(key, [candidates, packet]);
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

  private forget(packet: P): void {
    packet.waiting = false;
    const key = keyOf(packet.hash);
    const candidates = this.byHash.get(key)!;
    if (!Array.isArray(candidates)) this.byHash.delete(key);
    else if (candidates.length === 2) this.byHash.set(key, candidates[0] === packet ? candidates[1]! : candidates[0]!);
    else candidates.splice(candidates.indexOf(packet), 1);
  }

  /** Hands on the packets due by `now`; a throwing onPacket neither loses the others nor stops the timer. */
  private release(now: number): void {
    let failure: { error: unknown } | undefined;
    while (this.head < this.queue.length && this.queue[this.head]!.deadline <= now) {
      const packet = this.queue[this.head++]!;
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

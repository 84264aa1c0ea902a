import type { Endpoint } from '../ovn/endpoint';
import type { NetworkKind } from '../packet/fields';
import { epochMsOf, packetsStoodFor, sampleCountOf } from './event-samples';
import type { FlowSubject, NetworkEvent, VerdictStep } from './network-event';
import type { Verdict } from './verdict';

/** Flows an interval holds before the packets of further flows are only counted. */
export const DEFAULT_MAX_FLOWS = 10_000;

/** What was sampled of some packets: a flow's, an interval's, or its overflow's. */
export interface SampledCounts {
  /** Sampled packets (NetworkEvents). */
  sampledPackets: number;
  /** psample samples they were made of (OVN samples a packet at each stage it passes). */
  samples: number;
  /** Packets they stand for on the wire: each sampled packet counts as many as its sampling says (packetsStoodFor). */
  packets: number;
}

/**
 * The sampled packets of an interval that went the same way: same verdict chain (which names the
 * ACLs and policies, hence the datapath), same source and destination address, same network
 * layer, IP protocol, and destination port or ICMP type and code.
 */
export interface Flow extends SampledCounts {
  readonly chain: readonly VerdictStep[];
  readonly verdict: Verdict;
  /** The endpoints of the flow's first packet (absent without the pod directory). */
  readonly src: Endpoint | undefined;
  readonly dst: Endpoint | undefined;
  readonly srcAddress: string | undefined;
  readonly dstAddress: string | undefined;
  readonly network: NetworkKind | undefined;
  readonly protocol: number | undefined;
  readonly dstPort: number | undefined;
  readonly icmpType: number | undefined;
  readonly icmpCode: number | undefined;
  /** Kernel times of its first and last sampled packet, ms since the epoch (fractional, to about a µs). */
  firstSeenMs: number;
  lastSeenMs: number;
}

/** An interval's flows, and what did not fit in them. */
export interface FlowInterval {
  readonly startMs: number;
  readonly endMs: number;
  readonly flows: readonly Flow[];
  /** All the interval's sampled packets, those in `overflow` included. */
  readonly total: SampledCounts;
  /** Packets of flows that found the interval's table full. */
  readonly overflow: SampledCounts;
}

const NETWORK_INDEX: Readonly<Record<NetworkKind, number>> = { arp: 1, ipv4: 2, ipv6: 3 };
const NO_PROTOCOL = 256;

type ByTransport = Map<number, Flow>;
type ByDestination = Map<string | undefined, ByTransport>;
type BySource = Map<string | undefined, ByDestination>;

const zero = (): SampledCounts => ({ sampledPackets: 0, samples: 0, packets: 0 });

/**
 * Sums sampled packets into flows over an interval, with a bounded table. A packet is keyed by
 * numbers and by what the pipeline already made for it, so it costs map lookups and no string:
 * its chain (one shared array per distinct way, src/events/verdict-chains.ts), its address texts
 * (which the pod directory was already given) and one number for network, protocol and port or
 * ICMP type and code. Endpoints are not keys: past the pod directory's remembered misses, an
 * outside address gets a new Endpoint per packet.
 */
export class FlowAggregator {
  #chains = new Map<readonly VerdictStep[], BySource>();
  #list: Flow[] = [];
  #total = zero();
  #overflow = zero();
  #startMs: number;

  constructor(
    startMs: number,
    private readonly maxFlows = DEFAULT_MAX_FLOWS,
  ) {
    this.#startMs = startMs;
  }

  /** Flows in the current interval. */
  get size(): number {
    return this.#list.length;
  }

  /** Sums one sampled packet. */
  add(event: NetworkEvent): void {
    const timeMs = epochMsOf(event);
    this.addCounts(event, sampleCountOf(event), packetsStoodFor(event), timeMs, timeMs, 1);
  }

  /**
   * Sums `sampledPackets` sampled packets that went the way `subject` says (its chain, endpoints
   * and fields), made of `samples` samples, standing for `packets` packets on the wire, seen
   * from `firstMs` to `lastMs` (kernel times, ms since the epoch).
   */
  addCounts(subject: FlowSubject, samples: number, packets: number, firstMs: number, lastMs: number, sampledPackets: number): void {
    const fields = subject.fields;
    const total = this.#total;
    total.sampledPackets += sampledPackets;
    total.samples += samples;
    total.packets += packets;

    let bySource = this.#chains.get(subject.chain);
    if (bySource === undefined) this.#chains.set(subject.chain, (bySource = new Map() as BySource));
    const srcAddress = fields.src;
    let byDestination = bySource.get(srcAddress);
    if (byDestination === undefined) bySource.set(srcAddress, (byDestination = new Map() as ByDestination));
    const dstAddress = fields.dst;
    let byTransport = byDestination.get(dstAddress);
    if (byTransport === undefined) byDestination.set(dstAddress, (byTransport = new Map() as ByTransport));
    const network = fields.network;
    const protocol = fields.protocol;
    const dstPort = fields.dstPort;
    const icmpType = dstPort === undefined ? fields.icmpType : undefined;
    const icmpCode = icmpType === undefined ? undefined : fields.icmpCode;
    const detail = dstPort ?? (icmpType === undefined ? 0 : icmpType * 256 + icmpCode!);
    // Below 2^27: a small integer, hashed without a heap number.
    const transport = ((protocol ?? NO_PROTOCOL) * 65_536 + detail) * 4 + (network === undefined ? 0 : NETWORK_INDEX[network]);

    let flow = byTransport.get(transport);
    if (flow === undefined) {
      if (this.#list.length >= this.maxFlows) {
        const overflow = this.#overflow;
        overflow.sampledPackets += sampledPackets;
        overflow.samples += samples;
        overflow.packets += packets;
        return;
      }
      flow = {
        chain: subject.chain,
        verdict: subject.verdict,
        src: subject.src,
        dst: subject.dst,
        srcAddress,
        dstAddress,
        network,
        protocol,
        dstPort,
        icmpType,
        icmpCode,
        sampledPackets: 0,
        samples: 0,
        packets: 0,
        firstSeenMs: firstMs,
        lastSeenMs: lastMs,
      };
      byTransport.set(transport, flow);
      this.#list.push(flow);
    }
    flow.sampledPackets += sampledPackets;
    flow.samples += samples;
    flow.packets += packets;
    // Grouping hands packets on in the order their group closed, not quite in kernel time order.
    if (firstMs < flow.firstSeenMs) flow.firstSeenMs = firstMs;
    if (lastMs > flow.lastSeenMs) flow.lastSeenMs = lastMs;
  }

  /** Counts sampled packets that found no room before they reached this table (a native flow table's cap): in the total, as overflow. */
  addOverflow(sampledPackets: number, samples: number, packets: number): void {
    const total = this.#total;
    total.sampledPackets += sampledPackets;
    total.samples += samples;
    total.packets += packets;
    const overflow = this.#overflow;
    overflow.sampledPackets += sampledPackets;
    overflow.samples += samples;
    overflow.packets += packets;
  }

  /** Ends the interval at `endMs`: its flows in the order they were first seen; the next interval starts empty. */
  take(endMs: number): FlowInterval {
    const interval: FlowInterval = {
      startMs: this.#startMs,
      endMs,
      flows: this.#list,
      total: this.#total,
      overflow: this.#overflow,
    };
    this.#chains = new Map();
    this.#list = [];
    this.#total = zero();
    this.#overflow = zero();
    this.#startMs = endMs;
    return interval;
  }
}

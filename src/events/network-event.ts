import { endpointText, type Endpoint } from '../ovn/endpoint';
import type { OvnDatapathInfo, OvnSampleEvent } from '../ovn/event';
import type { ObservationIds } from '../ovn/cookie';
import type { IpfixSample } from '../ipfix/types';
import type { PacketFields } from '../packet/fields';
import type { DecodedPacket } from '../packet/types';
import type { PsampleMessage } from '../psample/types';
import type { Verdict } from './verdict';

/** One step of the packet's way through OVN: one distinct sample cookie. */
export interface VerdictStep {
  readonly verdict: Verdict;
  /** "Delegated by admin network policy pass-monitoring"; the cookie's numbers without OVN. */
  readonly text: string;
  /** A short name of the policy for columns and metrics: "anp:pass-monitoring". */
  readonly policy: string;
  /** The OVN decoder's answer; absent when decoding through OVN is off. */
  readonly event?: OvnSampleEvent;
  /** The cookie's ids; absent for samples without an 8-byte cookie. */
  readonly cookie?: ObservationIds;
  /** Samples of this packet that carried this cookie (OVN can sample one stage twice). */
  readonly samples: number;
}

/**
 * One packet: its samples grouped, its endpoints resolved, its verdict chain in order. The
 * contract of every sample source (psample's batches, OVS IPFIX records): formatters, filters,
 * `top` and the metrics read nothing else. A source without the packet's bytes gives samples
 * whose `data` is empty and no `packet`.
 */
export interface NetworkEvent {
  /** The first sample's kernel timestamp (ns since the epoch), or its arrival time when the kernel gave none. */
  readonly timestampNs: bigint;
  readonly group: number;
  readonly iifindex: number;
  readonly oifindex?: number;
  readonly nsid?: number;
  /** The packet's fields: what filters, pods and formatters read (see PacketFields). */
  readonly fields: PacketFields;
  /**
   * Every header of the first sample's data: decodePacket(samples[0].data, samples[0].proto), made
   * when first read. Undefined for a source without the packet's bytes.
   */
  readonly packet: DecodedPacket | undefined;
  readonly src?: Endpoint;
  readonly dst?: Endpoint;
  /** The last step's verdict: what finally happened to the packet. */
  readonly verdict: Verdict;
  readonly chain: readonly VerdictStep[];
  /** The logical datapath the samples came from (when decoded through OVN). */
  readonly datapath?: OvnDatapathInfo;
  /** The psample messages, in arrival order (for IPFIX, each record as a sample without data: see ipfixSampleMessage). */
  readonly samples: readonly PsampleMessage[];
  /**
   * The first record, when an IPFIX exporter reported the packet: its exporter, the packets it
   * stands for (weight) and the OVS interface names. Absent for psample's samples.
   */
  readonly ipfix?: IpfixSample;
}

/**
 * What flows, filters and the metrics read of a packet: its way, its endpoints, its fields and its
 * psample group. A NetworkEvent is one; so is a native flow of watch --aggregate
 * (src/events/native-flows.ts), which stands for all its packets.
 */
export type FlowSubject = Pick<NetworkEvent, 'chain' | 'verdict' | 'src' | 'dst' | 'fields' | 'group'>;

/** The chain as one sentence: steps joined by " → ". */
export function chainText(event: Pick<NetworkEvent, 'chain'>): string {
  let text = '';
  for (const step of event.chain) text += text === '' ? step.text : ` → ${step.text}`;
  return text;
}

/** The steps' short policy names: "anp:pass-monitoring→isolation:shop". */
export function policyText(event: Pick<NetworkEvent, 'chain'>): string {
  let text = '';
  for (const step of event.chain) text += text === '' ? step.policy : `→${step.policy}`;
  return text;
}

/** The namespace the verdict is about: the deciding policy's, else the destination pod's, else the source's. */
export function eventNamespace(event: Pick<NetworkEvent, 'chain' | 'src' | 'dst'>): string | undefined {
  for (let i = event.chain.length - 1; i >= 0; i--) {
    const namespace = event.chain[i]!.event?.owner?.namespace;
    if (namespace !== undefined) return namespace;
  }
  return event.dst?.namespace ?? event.src?.namespace;
}

// Endpoints are shared by every packet from or to them (PodDirectory hands out one per address).
const endpointTexts = new WeakMap<Endpoint, string>();

/** One side of the packet for a column: its endpoint ("shop/frontend"), else its address, else "-". */
export function sideText(event: Pick<NetworkEvent, 'src' | 'dst' | 'fields'>, side: 'src' | 'dst'): string {
  const endpoint = event[side];
  if (endpoint === undefined) return event.fields[side] ?? '-';
  let text = endpointTexts.get(endpoint);
  if (text === undefined) {
    text = endpointText(endpoint);
    endpointTexts.set(endpoint, text);
  }
  return text;
}

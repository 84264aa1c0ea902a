import { EventEmitter } from 'node:events';
import { observationIdsFromCookie, splitObservationDomain, type ObservationIds } from '../ovn/cookie';
import type { OvnSampleDecoder } from '../ovn/decoder';
import type { Endpoint } from '../ovn/endpoint';
import type { OvnSampleEvent } from '../ovn/event';
import type { PodDirectory } from '../ovn/pod-directory';
import { decodePacket } from '../packet/decode';
import type { DecodedPacket } from '../packet/types';
import type { PsampleMessage } from '../psample/types';
import type { NetworkEvent, VerdictStep } from './network-event';
import { PacketGrouper } from './packet-grouper';
import { policyLabel, stepText, verdictOf, type Verdict } from './verdict';

/** Samples of one packet arrive within microseconds, or milliseconds when an upcall sits between two stages. */
export const DEFAULT_GROUP_WINDOW_MS = 50;

export interface NetworkEventAssemblerOptions {
  /** Says which ACL and policy each sample hit; without it steps carry only the cookie. */
  readonly decoder?: OvnSampleDecoder;
  /** Resolves the packet's addresses to pods and nodes. */
  readonly pods?: PodDirectory;
  /** Samples of one packet within this window are one event; 0 makes every sample its own event. */
  readonly groupWindowMs?: number;
}

export interface NetworkEventAssemblerEvents {
  event: [event: NetworkEvent];
}

interface Taken {
  readonly message: PsampleMessage;
  readonly ids: ObservationIds | undefined;
  readonly ovn: OvnSampleEvent | undefined;
  readonly datapathKey: number;
  readonly data: Uint8Array;
  readonly timestampNs: bigint;
}

function addresses(packet: DecodedPacket): [string | undefined, string | undefined] {
  const network = packet.network;
  if (network === undefined) return [undefined, undefined];
  if (network.kind === 'arp') return [network.senderIp, network.targetIp];
  return [network.src, network.dst];
}

/** What a step says of an OVN event, worked out once per event: the decoder hands out one per cookie. */
interface StepParts {
  readonly verdict: Verdict;
  readonly text: string;
  readonly policy: string;
}
const stepParts = new WeakMap<OvnSampleEvent, StepParts>();

function partsOf(ovn: OvnSampleEvent): StepParts {
  let parts = stepParts.get(ovn);
  if (parts === undefined) {
    parts = { verdict: ovn.status === 'decoded' ? verdictOf(ovn.action) : 'unknown', text: stepText(ovn), policy: policyLabel(ovn) };
    stepParts.set(ovn, parts);
  }
  return parts;
}

function ovnStep(ovn: OvnSampleEvent, ids: ObservationIds | undefined): VerdictStep & { samples: number } {
  const { verdict, text, policy } = partsOf(ovn);
  return ids === undefined
    ? { verdict, text, policy, event: ovn, samples: 1 }
    : { verdict, text, policy, event: ovn, cookie: ids, samples: 1 };
}

function cookieStep(ids: ObservationIds | undefined): Omit<VerdictStep, 'samples'> {
  if (ids === undefined) return { verdict: 'unknown', text: 'No OVS cookie', policy: '-' };
  const { appId, datapathKey } = splitObservationDomain(ids.obsDomainId);
  return { verdict: 'unknown', text: `app ${appId} datapath ${datapathKey} point ${ids.obsPointId}`, policy: '-', cookie: ids };
}

/**
 * Turns psample samples into NetworkEvents: one per packet, with its verdict chain (each distinct
 * cookie decoded through OVN), its source and destination resolved to pods, and its samples.
 */
export class NetworkEventAssembler extends EventEmitter<NetworkEventAssemblerEvents> {
  private readonly decoder: OvnSampleDecoder | undefined;
  private readonly pods: PodDirectory | undefined;
  private readonly grouper: PacketGrouper<Taken> | undefined;

  constructor(options: NetworkEventAssemblerOptions = {}) {
    super();
    this.decoder = options.decoder;
    this.pods = options.pods;
    const windowMs = options.groupWindowMs ?? DEFAULT_GROUP_WINDOW_MS;
    this.grouper = windowMs > 0 ? new PacketGrouper<Taken>(windowMs, (members) => this.emitPacket(members)) : undefined;
  }

  /** Takes one sample (group events and other commands are ignored). */
  push(message: PsampleMessage): void {
    if (message.command !== 'sample') return;
    const ids = message.userCookie === undefined ? undefined : observationIdsFromCookie(message.userCookie);
    const ovn = this.decoder?.decodeSample(message);
    const taken: Taken = {
      message,
      ids,
      ovn,
      datapathKey: ids === undefined ? -1 : ids.obsDomainId & 0xffffff,
      data: message.data,
      // Kernels before 5.13 give no timestamp: the arrival time stands in.
      timestampNs: message.timestampNs === 0n ? BigInt(Date.now()) * 1_000_000n : message.timestampNs,
    };
    if (this.grouper === undefined) this.emitPacket([taken]);
    else this.grouper.push(taken);
  }

  /** Emits the packets still waiting for more samples. */
  flush(): void {
    this.grouper?.flush();
  }

  close(): void {
    this.grouper?.close();
  }

  private emitPacket(members: readonly Taken[]): void {
    const first = members[0]!;
    const chain: (VerdictStep & { samples: number })[] = [];
    for (const member of members) {
      const repeat = chain.find(
        (step) =>
          step.cookie !== undefined &&
          member.ids !== undefined &&
          step.cookie.obsDomainId === member.ids.obsDomainId &&
          step.cookie.obsPointId === member.ids.obsPointId,
      );
      if (repeat !== undefined) {
        repeat.samples++;
        continue;
      }
      const ovn = member.ovn;
      chain.push(ovn === undefined ? { ...cookieStep(member.ids), samples: 1 } : ovnStep(ovn, member.ids));
    }
    const message = first.message;
    const packet = decodePacket(message.data, message.proto);
    const datapath = first.ovn?.datapath;
    let src: Endpoint | undefined;
    let dst: Endpoint | undefined;
    if (this.pods !== undefined) {
      const [srcIp, dstIp] = addresses(packet);
      if (srcIp !== undefined) src = this.pods.resolve(datapath?.network, srcIp);
      if (dstIp !== undefined) dst = this.pods.resolve(datapath?.network, dstIp);
    }
    const event: NetworkEvent = {
      timestampNs: first.timestampNs,
      group: message.group,
      iifindex: message.iifindex,
      oifindex: message.oifindex,
      nsid: message.nsid,
      packet,
      src,
      dst,
      verdict: chain[chain.length - 1]!.verdict,
      chain,
      datapath,
      samples: members.map((member) => member.message),
    };
    this.emit('event', event);
  }
}

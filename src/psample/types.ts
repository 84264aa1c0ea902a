/** Where samples come from when not from the kernel's psample family (injection and tests). */
export interface PsampleSourceOptions {
  /** 'usersock' = NETLINK_USERSOCK multicast; 'generic' = NETLINK_GENERIC with a given group id. */
  protocol: 'generic' | 'usersock';
  /** nlmsg_type the messages carry (the psample family id on a real kernel). */
  familyId: number;
  /** Multicast group id to join (1-32 for usersock). */
  groupId: number;
}

export interface OpenPsampleOptions {
  /** psample SAMPLE_GROUP ids to keep; enforced by a kernel socket filter. Default: all. */
  groups?: readonly number[];
  /** Network namespace: a name under /run/netns, a path to a netns file, or a pid. */
  netns?: string | number;
  /** Also receive samples from peer namespaces that have an nsid; `nsid` is set on each sample. */
  listenAllNsid?: boolean;
  /** Socket receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF). Default 32 MiB. */
  receiveBufferBytes?: number;
  /** Also deliver psample NEW_GROUP / DEL_GROUP events (multicast group "config"). */
  config?: boolean;
  /** Injection / test source instead of the kernel psample family. */
  source?: PsampleSourceOptions;
  /** Samples buffered between the reader thread and JavaScript before counting queue drops. Default 262144. */
  queueCapacity?: number;
  /**
   * While samples flow, hand them to JavaScript every this many milliseconds (1–1000) instead of
   * the adaptive interval (1 ms at high rates up to 10 ms at low ones): for consumers that write
   * batches out rather than react to each sample, a longer interval saves most hand-offs' cost.
   */
  deliveryIntervalMs?: number;
  /** Closes the socket when aborted. */
  signal?: AbortSignal;
  /**
   * Once the socket is open and joined, give up every privilege (see dropPrivileges()): true
   * keeps the uid and drops all capabilities; { user } also switches to that user and its groups.
   * A psample family that registers again (module reload) cannot be rejoined afterwards: the
   * socket then closes with a PSAMPLE_PERMISSION error.
   */
  dropPrivileges?: boolean | DropPrivilegesOptions;
}

/** Who the process becomes when it gives up its privileges. */
export interface DropPrivilegesOptions {
  /** A user name or uid (not 0): the process switches to it, its primary group and its supplementary groups. */
  user?: string | number;
  /** A group name or gid instead of the user's primary group (needs `user`; required for a uid without a passwd entry). */
  group?: string | number;
}

/** One thread's capability sets, as /proc/self/task/TID/status shows them (bit n = capability n). */
export interface ThreadCapabilities {
  tid: number;
  name: string;
  inheritable: bigint;
  permitted: bigint;
  effective: bigint;
  bounding: bigint;
  ambient: bigint;
}

/** What dropPrivileges() left, read back from the kernel for every thread. */
export interface PrivilegeDropReport {
  /** A user was given (the ids are then the same in every thread). */
  switchedUser: boolean;
  uid: number;
  gid: number;
  groups: number[];
  /** The bounding set was emptied too (needs CAP_SETPCAP). */
  boundingCleared: boolean;
  /** Why the bounding set was kept, when it was. */
  boundingKeptBecause?: string;
  /** Threads of the process when checked. */
  threads: number;
  /**
   * Threads that block every signal, which the drop cannot reach, and still hold a capability:
   * Node's SIGUSR1 inspector watchdog, which only waits on a semaphore. With a user switch the
   * kernel has cleared their permitted, effective and ambient sets anyway (only the bounding set
   * may show here); without one they keep what they had.
   */
  unreachedThreads: ThreadCapabilities[];
}

/** Decoded PSAMPLE_ATTR_TUNNEL (collected tunnel metadata of the sampled packet). */
export interface PsampleTunnel {
  id?: bigint;
  ipv4Src?: string;
  ipv4Dst?: string;
  ipv6Src?: string;
  ipv6Dst?: string;
  tos?: number;
  ttl?: number;
  tpSrc?: number;
  tpDst?: number;
  dontFragment: boolean;
  csum: boolean;
  oam: boolean;
  ipv4InfoBridge: boolean;
  geneveOptions?: Uint8Array;
  vxlanGbp?: number;
  erspanOptions?: Uint8Array;
}

export type PsampleCommand = 'sample' | 'get-group' | 'new-group' | 'del-group';

/** One psample netlink message (a packet sample, or a group event when command != 'sample'). */
export interface PsampleMessage {
  command: PsampleCommand;
  group: number;
  /** Per-group sequence number; always 0 for OVS samples, so it cannot count loss there. */
  groupSeq: number;
  iifindex: number;
  oifindex?: number;
  origSize: number;
  /** 1-in-N sampling rate, or with `probability` a probability scaled to 2^32-1. */
  rate: number;
  probability: boolean;
  timestampNs: bigint;
  latencyNs?: bigint;
  outTc?: number;
  outTcOcc?: bigint;
  /** Ethertype of the sampled packet (host order). */
  proto: number;
  data: Uint8Array;
  userCookie?: Uint8Array;
  groupRefcount?: number;
  tunnel?: PsampleTunnel;
  /** Peer namespace id, with listenAllNsid, when the sample came from another namespace. */
  nsid?: number;
}

/** Every count of a socket's stats(): see native/wire/socket_stats.h, where they are defined. */
export type { PsampleStats } from '../native/abi.generated';

export interface PsampleDropEvent {
  /**
   * kernel: the receive buffer was full (stats().kernelDrops); queue: the queue towards
   * JavaScript was full (queueDrops); close: still in the socket or not yet delivered when the
   * socket closed (closeDiscards).
   */
  kind: 'kernel' | 'queue' | 'close';
  /** Newly counted drops. */
  count: number;
  /** Total drops of this kind since open. */
  total: number;
}

/**
 * The psample family went away (module unloaded, Open vSwitch upgrade: 'start'), and the socket
 * joined it again when it came back ('end'). In between no sample could reach the socket, and
 * the kernel cannot say how many there were.
 */
export interface PsampleGapEvent {
  phase: 'start' | 'end';
  /** Gaps since open (stats().familyGaps). */
  total: number;
  /** end: the family id and packets group joined (a re-registered family may get new ones). */
  familyId?: number;
  groupId?: number;
  /** end: how long the socket could not receive; undefined when the unregistration was missed. */
  durationMs?: number;
}

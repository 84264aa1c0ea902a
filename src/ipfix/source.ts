import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';

import { SampleIterators } from '../psample/iterator';
import { IpfixBatch } from './batch';
import { IpfixDatagramDecoder } from './datagram-decoder';
import { IpfixSocketError } from './errors';
import { ExporterAllowList } from './exporter-allow-list';
import { checkIpfixOptions, type CheckedIpfixOptions, type OpenIpfixOptions } from './options';
import { UdpSocketProbe } from './receive-queue';
import { emptyIpfixStats, type IpfixStatName, type IpfixStats } from './stats';
import type { IpfixSample } from './types';

// As the psample socket: one turn of the event loop delivers for about this long, then yields.
const TURN_BUDGET_MS = 10;
// While records flow, the kernel's receive-buffer drop count is read at most this often (and
// whenever the sequence numbers show a loss).
const PROBE_INTERVAL_MS = 1000;
// How long close() keeps reading what the kernel still queued for the socket, to count it.
const CLOSE_DRAIN_MS = 1000;

/** Records counted instead of delivered, by cause. */
export type IpfixDropKind = 'receive-buffer' | 'sequence' | 'template' | 'queue' | 'close' | 'exporter';

export interface IpfixDropEvent {
  /**
   * receive-buffer: the socket's buffer was full (receiveBufferDrops, datagrams); sequence: the
   * exporters' sequence numbers skipped (sequenceLost, records, whatever lost them: a full buffer
   * shows here too); template: data sets whose template never came (templateLost); queue:
   * iterators held too much (queueDrops); close: undelivered at close() (closeDiscards);
   * exporter: packets the exporter sampled and could not send (exporterNotSent).
   */
  readonly kind: IpfixDropKind;
  readonly count: number;
  readonly total: number;
}

const DROP_KINDS: readonly (readonly [IpfixDropKind, IpfixStatName])[] = [
  ['receive-buffer', 'receiveBufferDrops'],
  ['sequence', 'sequenceLost'],
  ['template', 'templateLost'],
  ['queue', 'queueDrops'],
  ['close', 'closeDiscards'],
  ['exporter', 'exporterNotSent'],
];

export interface IpfixSourceEvents {
  /** The records of one turn of the event loop, before they are emitted one by one. */
  batch: [IpfixBatch];
  sample: [IpfixSample];
  drop: [IpfixDropEvent];
  /** A datagram that is not well-formed IPFIX (counted in stats().malformed): why, and who sent it. */
  malformed: [{ readonly exporter: string; readonly reason: string }];
  error: [Error];
  close: [];
}

function bindError(error: NodeJS.ErrnoException, options: CheckedIpfixOptions): Error {
  const where = `${options.family === 6 ? `[${options.address}]` : options.address}:${options.port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new IpfixSocketError(
        'IPFIX_ADDRESS_IN_USE',
        `UDP ${where} is already in use (another IPFIX collector?): stop it, or listen on another port and point the exporter there`,
        { cause: error },
      );
    case 'EACCES':
    case 'EPERM':
      return new IpfixSocketError(
        'IPFIX_PERMISSION',
        `binding UDP ${where} is not permitted: ports below 1024 need CAP_NET_BIND_SERVICE; use a port of 1024 or more (IPFIX's is 4739)`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
    case 'EAFNOSUPPORT':
    case 'EINVAL':
      return new IpfixSocketError(
        'IPFIX_BAD_ADDRESS',
        `${options.address} is not an address of this host (${error.code}): bind 127.0.0.1 (the default) or one of this host's addresses`,
        { cause: error },
      );
    default:
      return new IpfixSocketError('IPFIX_SOCKET_ERROR', `the IPFIX socket on UDP ${where} failed: ${error.message}`, { cause: error });
  }
}

/**
 * A live IPFIX collector on one UDP socket, with the conventions of PsampleSocket: an
 * EventEmitter (`batch`, `sample`, `drop`, `close`) and an async iterable of IpfixSamples,
 * stats() that account for every datagram, close() that counts what it leaves undelivered.
 *
 * UDP cannot be paused: while an async iterator holds more than 65,536 unread records, delivery
 * pauses for everyone and what arrives meanwhile waits, up to queueCapacity records, then is
 * counted in queueDrops.
 */
export class IpfixSource extends EventEmitter<IpfixSourceEvents> implements AsyncIterable<IpfixSample> {
  /** The bound address and port (the port chosen by the kernel when 0 was asked). */
  readonly address: string;
  readonly port: number;
  /** The receive buffer the kernel granted (it counts overhead: about twice what the datagrams fill). */
  readonly receiveBufferBytes: number;

  readonly #socket: Socket;
  readonly #options: CheckedIpfixOptions;
  readonly #allowed: ExporterAllowList;
  readonly #decoder: IpfixDatagramDecoder;
  readonly #stats: IpfixStats = emptyIpfixStats();
  readonly #reported: IpfixStats = emptyIpfixStats();
  readonly #probe: UdpSocketProbe | undefined;
  readonly #iterators = new SampleIterators<IpfixSample>(() => this.#scheduleFlush());
  readonly #signal: AbortSignal | undefined;
  // Records decoded and not delivered: whole batches, the first one from #index on.
  readonly #batches: IpfixSample[][] = [];
  #index = 0;
  #announced = false;
  #incoming: IpfixSample[] = [];
  #queued = 0;
  #flushScheduled = false;
  #closed = false;
  #draining = false;
  #lastProbe = 0;
  #probedLost = 0;
  #expiry: NodeJS.Timeout | undefined;
  readonly #push = (sample: IpfixSample): void => {
    if (this.#queued >= this.#options.queueCapacity) {
      this.#stats.queueDrops++;
      return;
    }
    this.#incoming.push(sample);
    this.#queued++;
  };

  /** @internal Use openIpfix(). */
  constructor(socket: Socket, options: CheckedIpfixOptions, allowed: ExporterAllowList, signal: AbortSignal | undefined) {
    super();
    this.#socket = socket;
    this.#options = options;
    this.#allowed = allowed;
    this.#decoder = new IpfixDatagramDecoder(options.decoder, this.#stats);
    const bound = socket.address();
    this.address = bound.address;
    this.port = bound.port;
    this.receiveBufferBytes = socket.getRecvBufferSize();
    this.#probe = UdpSocketProbe.find(options.family, this.port);
    this.#signal = signal;
    socket.on('message', this.#onMessage);
    socket.on('error', (error) => this.#fail(error));
    if (signal?.aborted) this.close();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether receiveBufferDrops can be read (from /proc/net/udp): false without /proc. */
  get receiveDropsKnown(): boolean {
    return this.#probe !== undefined;
  }

  /** Every count (see IPFIX_STATS); still readable after close, when they are final. */
  stats(): IpfixStats {
    if (!this.#closed) this.#readProbe();
    this.#stats.queued = this.#queued;
    return { ...this.#stats };
  }

  ref(): this {
    if (!this.#closed) this.#socket.ref();
    return this;
  }

  unref(): this {
    if (!this.#closed) this.#socket.unref();
    return this;
  }

  /**
   * Stops delivering at once: no `batch` or `sample` event follows, even from a listener. The
   * records decoded and not delivered, the data sets waiting for a template, and the datagrams
   * the kernel still holds for the socket (read for up to a second, until its queue is empty) are
   * counted in closeDiscards, announced by a `drop` event of kind 'close', then `close` is emitted.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    clearTimeout(this.#expiry);
    let undelivered = this.#incoming.length;
    for (let i = 0; i < this.#batches.length; i++) undelivered += this.#batches[i]!.length - (i === 0 ? this.#index : 0);
    if (this.#announced) undelivered -= this.#batches[0]!.length - this.#index;
    this.#batches.length = 0;
    this.#incoming = [];
    this.#queued = 0;
    this.#stats.closeDiscards += undelivered + this.#decoder.discardPending();
    this.#iterators.finishAll();
    this.#readProbe();
    this.#draining = true;
    this.#drain(Date.now() + CLOSE_DRAIN_MS);
  }

  /** Resolves once closed and every count is final. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed && !this.#draining) return;
    const closed = new Promise<void>((resolve) => this.once('close', resolve));
    this.close();
    await closed;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<IpfixSample> {
    return this.#iterators.open(this.#closed);
  }

  readonly #onAbort = (): void => this.close();

  readonly #onMessage = (datagram: Buffer, sender: RemoteInfo): void => {
    if (this.#closed) {
      // Read while closing: what the kernel had queued for the socket.
      this.#stats.datagrams++;
      this.#stats.closeDiscards++;
      return;
    }
    if (!this.#allowed.allows(sender.address)) {
      this.#stats.datagrams++;
      this.#stats.rejectedExporter++;
      return;
    }
    const now = Date.now();
    const error = this.#decoder.decode(datagram, { address: sender.address, port: sender.port }, now, this.#push);
    if (error !== undefined) this.emit('malformed', { exporter: `${sender.address}:${sender.port}`, reason: error.message });
    if (this.#decoder.nextDeadline !== undefined && this.#expiry === undefined) this.#armExpiry();
    this.#scheduleFlush();
  };

  #armExpiry(): void {
    const deadline = this.#decoder.nextDeadline;
    if (deadline === undefined || this.#closed) return;
    this.#expiry = setTimeout(
      () => {
        this.#expiry = undefined;
        this.#decoder.expire(Date.now());
        this.#reportDrops();
        this.#armExpiry();
      },
      Math.max(0, deadline - Date.now()) + 1,
    );
    this.#expiry.unref();
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#closed) return;
    this.#flushScheduled = true;
    setImmediate(this.#flush);
  }

  // The records that arrived since the last turn become a batch; batches are delivered about
  // TURN_BUDGET_MS of listener work per turn of the event loop, like the psample socket's. An
  // exception in a listener goes to 'uncaughtException', as from any event source; if the process
  // survives it, the rest follows on the next turn, in order.
  readonly #flush = (): void => {
    this.#flushScheduled = false;
    if (this.#closed) return;
    if (this.#incoming.length > 0) {
      this.#batches.push(this.#incoming);
      this.#incoming = [];
    }
    if (this.#iterators.paused) return;
    try {
      this.#deliver();
    } catch (error) {
      this.#scheduleFlush();
      throw error;
    }
    if (this.#closed) return;
    this.#reportDrops();
    if (this.#batches.length > 0 && !this.#iterators.paused) this.#scheduleFlush();
  };

  #deliver(): void {
    const deadline = performance.now() + TURN_BUDGET_MS;
    while (this.#batches.length > 0) {
      if (performance.now() > deadline) return;
      const samples = this.#batches[0]!;
      if (!this.#announced && this.listenerCount('batch') > 0) {
        // Counted before the listener runs: a listener that throws or closes the source had them.
        this.#announced = true;
        this.#stats.received += samples.length - this.#index;
        this.emit('batch', new IpfixBatch(this.#index === 0 ? samples : samples.slice(this.#index)));
        if (this.#closed) return;
      }
      const oneByOne = this.#iterators.size > 0 || this.listenerCount('sample') > 0;
      while (this.#index < samples.length) {
        const sample = samples[this.#index++]!;
        this.#queued--;
        if (!oneByOne) {
          if (!this.#announced) this.#stats.received++;
          continue;
        }
        if (!this.#announced) this.#stats.received++;
        // Iterators first: a listener that throws must not take the record from them.
        this.#iterators.push(sample);
        this.emit('sample', sample);
        if (this.#closed) return;
      }
      this.#batches.shift();
      this.#index = 0;
      this.#announced = false;
      if (this.#iterators.checkBacklog()) return;
    }
  }

  #readProbe(): void {
    const state = this.#probe?.read();
    this.#lastProbe = Date.now();
    this.#probedLost = this.#stats.sequenceLost;
    if (state !== undefined) this.#stats.receiveBufferDrops = state.drops;
  }

  #reportDrops(): void {
    if (this.#probe !== undefined && (this.#stats.sequenceLost !== this.#probedLost || Date.now() - this.#lastProbe >= PROBE_INTERVAL_MS)) {
      this.#readProbe();
    }
    for (const [kind, stat] of DROP_KINDS) {
      const total = this.#stats[stat];
      const count = total - this.#reported[stat];
      if (count === 0) continue;
      this.#reported[stat] = total;
      this.emit('drop', { kind, count, total });
    }
  }

  // Reads what the kernel still holds for the socket (each counted by #onMessage), then closes it.
  #drain(until: number): void {
    const queued = this.#probe?.read()?.queuedBytes ?? 0;
    if (queued > 0 && Date.now() < until) {
      setTimeout(() => this.#drain(until), 1);
      return;
    }
    const state = this.#probe?.read();
    if (state !== undefined) this.#stats.receiveBufferDrops = state.drops;
    this.#socket.close();
    this.#draining = false;
    this.#reportDrops();
    this.emit('close');
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    const failure = new IpfixSocketError(
      'IPFIX_SOCKET_ERROR',
      `the IPFIX socket failed (${error.message}) and was closed: open a new source to continue`,
      {
        cause: error,
      },
    );
    // Iterators end with the failure (their consumers' next() rejects with it), before close() would end them plainly.
    const iterators = this.#iterators.finishAll(failure);
    this.close();
    if (this.listenerCount('error') > 0) this.emit('error', failure);
    else if (iterators === 0) throw failure;
  }
}

/**
 * Opens an IPFIX collector: binds the UDP socket (127.0.0.1:4739 by default) and resolves once
 * it listens. Rejects with IpfixOptionError for a bad option, IpfixSocketError for a port in
 * use, a port that needs a privilege, or an address not on this host.
 */
export async function openIpfix(options: OpenIpfixOptions = {}): Promise<IpfixSource> {
  const checked = checkIpfixOptions(options);
  const allowed = new ExporterAllowList(checked.exporters);
  const socket = createSocket({ type: checked.family === 6 ? 'udp6' : 'udp4', ipv6Only: checked.family === 6 });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      socket.close();
      reject(bindError(error, checked));
    };
    socket.once('error', onError);
    socket.bind({ address: checked.address, port: checked.port, exclusive: true }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
  try {
    socket.setRecvBufferSize(checked.receiveBufferBytes);
  } catch {
    // Capped by net.core.rmem_max, or refused: the kernel's default buffer stays.
  }
  return new IpfixSource(socket, checked, allowed, options.signal);
}

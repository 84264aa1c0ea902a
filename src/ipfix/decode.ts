import { IpfixDatagramDecoder } from './datagram-decoder';
import { checkIpfixOptions, type OpenIpfixOptions } from './options';
import { emptyIpfixStats, type IpfixStats } from './stats';
import type { IpfixExporter, IpfixSample } from './types';

/** One datagram as it was received: its bytes, who sent it, when (ms since the epoch). */
export interface IpfixDatagram {
  readonly bytes: Uint8Array;
  readonly exporter: IpfixExporter;
  readonly timeMs: number;
}

export interface DecodedIpfix {
  /** Every flow record, in the order a live source would have delivered them. */
  readonly samples: IpfixSample[];
  /** The same counts as a source's stats(); data sets still without a template at the end are in templateLost. */
  readonly stats: IpfixStats;
  /** Why each malformed datagram was rejected, with its index. */
  readonly malformed: { readonly index: number; readonly reason: string }[];
}

/**
 * Decodes recorded IPFIX datagrams (a capture: see `decode --ipfix`) as a live source would
 * have, their capture times standing for the clock: templates, the OVS < 3.2 fallback, late
 * templates (within templateWaitMs of capture time), sequence numbers, exporter statistics.
 * Every sender counts (there is no allow-list: the capture was chosen).
 */
export function decodeIpfixDatagrams(
  datagrams: Iterable<IpfixDatagram>,
  options: Pick<OpenIpfixOptions, 'templateLifetimeMs' | 'templateWaitMs' | 'pendingLimit' | 'templateFallback'> = {},
): DecodedIpfix {
  const checked = checkIpfixOptions(options);
  const decoder = new IpfixDatagramDecoder(checked.decoder, emptyIpfixStats());
  const samples: IpfixSample[] = [];
  const malformed: { index: number; reason: string }[] = [];
  const push = (sample: IpfixSample): void => {
    samples.push(sample);
  };
  let index = 0;
  let last = 0;
  for (const datagram of datagrams) {
    const now = Number.isFinite(datagram.timeMs) ? datagram.timeMs : last;
    last = now;
    decoder.expire(now);
    const bytes = Buffer.from(datagram.bytes.buffer, datagram.bytes.byteOffset, datagram.bytes.byteLength);
    const error = decoder.decode(bytes, datagram.exporter, now, push);
    if (error !== undefined) malformed.push({ index, reason: error.message });
    index++;
  }
  decoder.stats.templateLost += decoder.discardPending();
  decoder.stats.received = samples.length;
  return { samples, stats: decoder.stats, malformed };
}

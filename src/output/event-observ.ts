import { observationIdsFromCookie } from '../ovn/cookie';
import type { NetworkEvent } from '../events/network-event';
import type { PsampleMessage } from '../psample/types';
import { escapeControl } from './control-text';
import { LineBuffer } from './line-buffer';
import { packetDump } from './packet-dump';

export interface ObservOptions {
  /** ovnkube-observ -log-cookie: a "group_id=…, obs_domain=…, obs_point=…" line first. */
  readonly logCookie: boolean;
  /** ovnkube-observ -print-full-packet: every layer instead of "src=…, dst=…". */
  readonly printFullPacket: boolean;
  /** ovnkube-observ -enable-enrichment: the "OVN-K message:" / "decoding failed:" line. */
  readonly enrich: boolean;
}

/** Go's log.Ldate|log.Ltime|log.Lmicroseconds prefix, local time: "2006/01/02 15:04:05.000000 ". */
function logPrefix(timestampNs: bigint): string {
  const date = new Date(Number(timestampNs / 1_000_000n));
  const two = (n: number): string => String(n).padStart(2, '0');
  const micros = String(Number((timestampNs / 1000n) % 1_000_000n)).padStart(6, '0');
  return `${date.getFullYear()}/${two(date.getMonth() + 1)}/${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${micros} `;
}

function addressLine(event: NetworkEvent): string {
  const { network, src, dst } = event.fields;
  return network === undefined || network === 'arp' ? 'src=, dst=' : `src=${src}, dst=${dst}`;
}

/**
 * ovnkube-observ's output, line for line: for every sample, an optional cookie line, the
 * "OVN-K message: …" (or "decoding failed: …") line, then the packet line followed by an empty
 * line (its Println of a string that already ends in a newline), each with Go's log prefix.
 */
export class ObservFormatter {
  private readonly scratch = new LineBuffer();

  constructor(private readonly options: ObservOptions) {}

  /** The lines of `event`'s samples written at the end of `out`. */
  write(event: NetworkEvent, out: LineBuffer): void {
    for (const sample of event.samples) out.utf8(this.sample(event, sample));
  }

  /** The lines of `event`'s samples as a string. */
  format(event: NetworkEvent): string {
    this.write(event, this.scratch);
    const lines = this.scratch.take().toString();
    this.scratch.recycle();
    return lines;
  }

  private sample(event: NetworkEvent, sample: PsampleMessage): string {
    const prefix = logPrefix(sample.timestampNs === 0n ? event.timestampNs : sample.timestampNs);
    const ids = sample.userCookie === undefined ? undefined : observationIdsFromCookie(sample.userCookie);
    let out = '';
    if (this.options.logCookie) {
      out += `${prefix}group_id=${sample.group}, ${ids === undefined ? '' : `obs_domain=${ids.obsDomainId}, obs_point=${ids.obsPointId}`}\n`;
    }
    if (this.options.enrich) {
      const step =
        ids === undefined
          ? undefined
          : event.chain.find((s) => s.cookie?.obsDomainId === ids.obsDomainId && s.cookie.obsPointId === ids.obsPointId);
      const decoded = step?.event;
      out +=
        decoded === undefined
          ? `${prefix}\n`
          : decoded.status === 'decoded'
            ? `${prefix}OVN-K message: ${escapeControl(decoded.message)}\n`
            : `${prefix}decoding failed: ${escapeControl(decoded.message)}\n`;
    }
    out += `${prefix}${this.options.printFullPacket ? packetDump(event.packet, sample) : addressLine(event)}\n\n`;
    return out;
  }
}

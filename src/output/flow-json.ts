import type { Flow, FlowInterval, SampledCounts } from '../events/flow-aggregator';
import { chainJsonOf } from './chain-json';
import { jsonString, numberMember } from './json-text';
import { LineBuffer } from './line-buffer';
import { sharedJsonBytes } from './shared-json';

/** Bumped when a field changes meaning or goes away; new fields may appear without it. */
export const FLOW_JSON_VERSION = 1;

// Kernel times reach here as float ms (to about a µs): rounded, not truncated, to the ms.
const iso = (ms: number): string => new Date(Math.round(ms)).toISOString();

/** Packets stand-for estimates are sums of 1/probability: whole packets in the record. */
function countsJson(counts: SampledCounts): string {
  return `"sampledPackets":${counts.sampledPackets},"samples":${counts.samples},"packets":${Math.round(counts.packets)}`;
}

function writeSide(out: LineBuffer, name: string, flow: Flow, side: 'src' | 'dst'): void {
  const endpoint = flow[side];
  if (endpoint !== undefined) {
    out.latin1(`,"${name}":`);
    out.bytes(sharedJsonBytes(endpoint));
    return;
  }
  const address = side === 'src' ? flow.srcAddress : flow.dstAddress;
  if (address !== undefined) out.latin1(`,"${name}":{"ip":${jsonString(address)}}`);
}

/**
 * `watch --aggregate`'s records, one JSON line each (schema in README.md, "watch --aggregate"):
 * a `flow` line per flow of the interval, whose verdict, message and chain are the bytes watch's
 * JSON lines carry (chain-json.ts) and whose endpoints are the pod directory's (shared-json.ts),
 * then one `interval` line with the interval's totals and what overflowed its flow table.
 */
export class FlowJsonFormatter {
  readonly #scratch = new LineBuffer();

  /** The interval's lines as a string ('\n' after each). */
  format(interval: FlowInterval): string {
    this.write(interval, this.#scratch);
    const lines = this.#scratch.take().toString();
    this.#scratch.recycle();
    return lines;
  }

  /** The interval's lines, written at the end of `out`. */
  write(interval: FlowInterval, out: LineBuffer): void {
    const head = `{"version":${FLOW_JSON_VERSION},"type":"flow","start":"${iso(interval.startMs)}","end":"${iso(interval.endMs)}"`;
    for (const flow of interval.flows) {
      const chain = chainJsonOf(flow);
      out.latin1(head);
      out.bytes(chain.head);
      writeSide(out, 'src', flow, 'src');
      writeSide(out, 'dst', flow, 'dst');
      out.bytes(chain.steps);
      out.latin1(
        (flow.network === undefined ? '' : `,"network":"${flow.network}"`) +
          numberMember('protocol', flow.protocol) +
          numberMember('dstPort', flow.dstPort) +
          numberMember('icmpType', flow.icmpType) +
          numberMember('icmpCode', flow.icmpCode) +
          `,${countsJson(flow)},"firstSeen":"${iso(flow.firstSeenMs)}","lastSeen":"${iso(flow.lastSeenMs)}"}\n`,
      );
    }
    out.latin1(
      `{"version":${FLOW_JSON_VERSION},"type":"interval","start":"${iso(interval.startMs)}","end":"${iso(interval.endMs)}",` +
        `"flows":${interval.flows.length},${countsJson(interval.total)},"overflow":{${countsJson(interval.overflow)}}}\n`,
    );
  }
}

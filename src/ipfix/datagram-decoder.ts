import { IpfixDecodeError } from './errors';
import { parseMessage, type DataSet, type IpfixMessage } from './message';
import { decodeRecord, type RecordFields } from './record-decoder';
import type { IpfixStats } from './stats';
import type { CompiledTemplate } from './template';
import { TemplateStore } from './template-store';
import type { IpfixExporter, IpfixSample } from './types';

export interface DatagramDecoderOptions {
  /** A template not refreshed for this long is dropped (RFC 7011 section 8.4). */
  readonly templateLifetimeMs: number;
  /** How long a data set without a template waits for one before it is counted lost. */
  readonly templateWaitMs: number;
  /** Data sets held waiting at most; beyond, the oldest is counted lost. */
  readonly pendingLimit: number;
  /** Decode a domain's records with the same exporter's template of another domain (OVS < 3.2). */
  readonly templateFallback: boolean;
}

/** A data set that came before its template, with what its message said. */
interface PendingSet {
  readonly exporter: IpfixExporter;
  readonly message: IpfixMessage;
  readonly set: DataSet;
  readonly arrivedAt: number;
}

/** Where an exporter's sequence numbers stand: one transport session (address and port). */
interface SessionSequence {
  /** The sequence number the next message should carry; undefined when it cannot be known. */
  expected: number | undefined;
}

/** An exporting process's running count of packets it could not send, last reported. */
interface NotSentReport {
  total: number;
}

const HALF_RANGE = 2 ** 31;

/**
 * Turns IPFIX datagrams into samples, keeping the state that takes: every exporter's templates,
 * sequence numbers and exporting-process statistics, and the data sets waiting for a template.
 * Pure: no socket, no timer; the time is passed in. Every datagram is counted in `stats` as
 * exactly one of rejected (by the caller), malformed, or a message, and every data set of a
 * message as decoded, waiting, late, lost or reserved (see IPFIX_STATS).
 */
export class IpfixDatagramDecoder {
  readonly stats: IpfixStats;
  readonly #options: DatagramDecoderOptions;
  readonly #templates: TemplateStore;
  readonly #pending: PendingSet[] = [];
  // exporter address -> UDP source port -> where its sequence numbers stand
  readonly #sequences = new Map<string, Map<number, SessionSequence>>();
  readonly #notSent = new Map<string, NotSentReport>();
  readonly #fields: RecordFields = {
    observationPointId: undefined,
    packets: undefined,
    octets: undefined,
    flowStartDeltaUs: undefined,
    packet: {},
    exportingProcessId: undefined,
    notSentPacketTotalCount: undefined,
  };

  constructor(options: DatagramDecoderOptions, stats: IpfixStats) {
    this.#options = options;
    this.#templates = new TemplateStore(options.templateLifetimeMs, options.templateFallback);
    this.stats = stats;
  }

  /** When the oldest waiting data set is given up, if any waits. */
  get nextDeadline(): number | undefined {
    const oldest = this.#pending[0];
    return oldest === undefined ? undefined : oldest.arrivedAt + this.#options.templateWaitMs;
  }

  /**
   * Reads one datagram of `exporter`, received at `now` (ms), and hands each flow record to
   * `emit` in order: records that waited for a template this message brought come first.
   * Returns the error of a malformed datagram (counted), undefined otherwise.
   */
  decode(bytes: Buffer, exporter: IpfixExporter, now: number, emit: (sample: IpfixSample) => void): IpfixDecodeError | undefined {
    const stats = this.stats;
    stats.datagrams++;
    let message: IpfixMessage;
    try {
      message = parseMessage(bytes);
    } catch (error) {
      if (!(error instanceof IpfixDecodeError)) throw error;
      stats.malformed++;
      return error;
    }
    stats.messages++;
    stats.reservedSets += message.reservedSets;
    const address = exporter.address;
    const domain = message.observationDomainId;
    for (const withdrawal of message.withdrawals) {
      stats.templateWithdrawals += this.#templates.withdraw(address, domain, withdrawal);
    }
    for (const record of message.templates) {
      this.#templates.add(address, domain, record, now);
      stats.templates++;
    }
    if (message.templates.length > 0 && this.#pending.length > 0) this.#decodeWaiting(address, now, emit);
    let records: number | undefined = 0;
    for (const set of message.dataSets) {
      const match = this.#templates.find(address, domain, set.templateId, now);
      if (match === undefined) {
        stats.templateMissing++;
        this.#hold({ exporter, message, set, arrivedAt: now });
        records = undefined;
        continue;
      }
      const decoded = this.#decodeSet(match.template, match.fallbackDomain, exporter, message, set, bytes, emit);
      if (records !== undefined) records += decoded;
    }
    this.#followSequence(exporter, message, records);
    stats.templatesExpired = this.#templates.expired;
    return undefined;
  }

  /** Gives up the data sets that waited past templateWaitMs at `now`. */
  expire(now: number): void {
    const wait = this.#options.templateWaitMs;
    while (this.#pending.length > 0 && this.#pending[0]!.arrivedAt + wait <= now) {
      this.#pending.shift();
      this.stats.templateLost++;
    }
    this.stats.pending = this.#pending.length;
  }

  /** Forgets the waiting data sets (the source is closing); returns how many there were. */
  discardPending(): number {
    const count = this.#pending.length;
    this.#pending.length = 0;
    this.stats.pending = 0;
    return count;
  }

  #hold(pending: PendingSet): void {
    this.#pending.push(pending);
    if (this.#pending.length > this.#options.pendingLimit) {
      this.#pending.shift();
      this.stats.templateLost++;
    }
    this.stats.pending = this.#pending.length;
  }

  #decodeWaiting(address: string, now: number, emit: (sample: IpfixSample) => void): void {
    const waiting = this.#pending;
    let kept = 0;
    for (const pending of waiting) {
      const match =
        pending.exporter.address === address
          ? this.#templates.find(address, pending.message.observationDomainId, pending.set.templateId, now)
          : undefined;
      if (match === undefined) {
        waiting[kept++] = pending;
        continue;
      }
      this.stats.templateLate++;
      const set = pending.set;
      const bytes = Buffer.from(set.records.buffer, set.records.byteOffset, set.records.byteLength);
      this.#decodeSet(
        match.template,
        match.fallbackDomain,
        pending.exporter,
        pending.message,
        { templateId: set.templateId, records: bytes },
        bytes,
        emit,
      );
    }
    waiting.length = kept;
    this.stats.pending = kept;
  }

  /** Decodes the records of one set; returns how many data records it held (flow and options). */
  #decodeSet(
    template: CompiledTemplate,
    fallbackDomain: number | undefined,
    exporter: IpfixExporter,
    message: IpfixMessage,
    set: DataSet,
    datagram: Buffer,
    emit: (sample: IpfixSample) => void,
  ): number {
    const stats = this.stats;
    const records = set.records;
    // The set's bytes within the datagram: records are read from the datagram's Buffer.
    const start = records.byteOffset - datagram.byteOffset;
    const end = start + records.byteLength;
    const minimum = template.minRecordBytes;
    const fields = this.#fields;
    let count = 0;
    // Fewer bytes left than a record takes: padding (RFC 7011 section 3.3.1).
    for (let at = start; end - at >= minimum && (minimum > 0 || at < end);) {
      const next = decodeRecord(template, datagram, at, end, fields);
      if (next < 0 || next === at) {
        stats.malformedRecords++;
        break;
      }
      at = next;
      count++;
      if (template.kind === 'exporter-stats') {
        stats.optionsRecords++;
        this.#exporterStats(exporter.address);
        continue;
      }
      if (template.kind === 'options') {
        stats.optionsRecords++;
        continue;
      }
      stats.records++;
      if (fallbackDomain !== undefined) stats.templateFallback++;
      emit({
        source: 'ipfix',
        exporter,
        observationDomainId: message.observationDomainId,
        observationPointId: fields.observationPointId,
        exportTime: message.exportTime,
        flowStartUs: fields.flowStartDeltaUs === undefined ? undefined : message.exportTime * 1e6 - fields.flowStartDeltaUs,
        sequenceNumber: message.sequenceNumber,
        templateId: template.templateId,
        templateDomainId: fallbackDomain,
        weight: fields.packets ?? 1,
        octets: fields.octets,
        packet: fields.packet,
      });
    }
    return count;
  }

  #exporterStats(address: string): void {
    const { exportingProcessId, notSentPacketTotalCount } = this.#fields;
    if (exportingProcessId === undefined || notSentPacketTotalCount === undefined) return;
    const key = `${address}|${exportingProcessId}`;
    const report = this.#notSent.get(key);
    if (report === undefined) {
      this.#notSent.set(key, { total: notSentPacketTotalCount });
      this.stats.exporterNotSent += notSentPacketTotalCount;
      return;
    }
    // A running total; one that went down belongs to an exporting process that started over.
    this.stats.exporterNotSent +=
      notSentPacketTotalCount >= report.total ? notSentPacketTotalCount - report.total : notSentPacketTotalCount;
    report.total = notSentPacketTotalCount;
  }

  /**
   * RFC 7011's sequence number counts the data records an exporter sent before the message.
   * Open vSwitch counts them per exporter across observation domains (not per domain as the RFC
   * has it), so one count per transport session (address and port: a reconfigured OVS exporter
   * sends from a new port) follows it. After a data set of unknown size (no template yet), the
   * next message sets the count again: a gap there cannot be told from the set's own records.
   */
  #followSequence(exporter: IpfixExporter, message: IpfixMessage, records: number | undefined): void {
    let ports = this.#sequences.get(exporter.address);
    if (ports === undefined) this.#sequences.set(exporter.address, (ports = new Map<number, SessionSequence>()));
    let session = ports.get(exporter.port);
    if (session === undefined) ports.set(exporter.port, (session = { expected: undefined }));
    const sequence = message.sequenceNumber;
    if (session.expected !== undefined) {
      const ahead = (sequence - session.expected) >>> 0;
      if (ahead !== 0 && ahead < HALF_RANGE) this.stats.sequenceLost += ahead;
      else if (ahead >= HALF_RANGE) {
        this.stats.sequenceDisorder++;
        // A late message does not move the count back.
        if (records !== undefined) return;
      }
    }
    session.expected = records === undefined ? undefined : (sequence + records) >>> 0;
  }
}

import { IpfixDecodeError } from './errors';

/**
 * RFC 7011's message layout: a 16-byte header (version 10, length, export time, sequence number,
 * observation domain), then sets of a 4-byte header (set id, length): 2 templates, 3 options
 * templates, 256 and above data records of that template id.
 */
export const IPFIX_VERSION = 10;
export const MESSAGE_HEADER_BYTES = 16;
const SET_HEADER_BYTES = 4;
export const TEMPLATE_SET_ID = 2;
export const OPTIONS_TEMPLATE_SET_ID = 3;
export const MIN_DATA_SET_ID = 256;
/** A field length of 65535 announces a variable-length field (RFC 7011 section 7). */
export const VARIABLE_LENGTH = 0xffff;
const ENTERPRISE_BIT = 0x8000;

export interface FieldSpecifier {
  /** The Information Element id, enterprise bit cleared. */
  readonly id: number;
  /** 0 for IANA's elements, else the Private Enterprise Number. */
  readonly enterprise: number;
  /** Bytes in each record, or VARIABLE_LENGTH. */
  readonly length: number;
}

export interface TemplateRecord {
  readonly templateId: number;
  /** An options template's scope fields (the first ones); 0 for a template. */
  readonly scopeFieldCount: number;
  readonly options: boolean;
  readonly fields: readonly FieldSpecifier[];
}

/** A template withdrawn (field count 0); `all`: every template (or options template) of the domain. */
export interface TemplateWithdrawal {
  readonly templateId: number;
  readonly options: boolean;
  readonly all: boolean;
}

export interface DataSet {
  readonly templateId: number;
  /** The set's records (and any padding), a view of the datagram. */
  readonly records: Uint8Array;
}

export interface IpfixMessage {
  /** Seconds since the epoch, when the exporter sent it. */
  readonly exportTime: number;
  readonly sequenceNumber: number;
  readonly observationDomainId: number;
  readonly templates: readonly TemplateRecord[];
  readonly withdrawals: readonly TemplateWithdrawal[];
  readonly dataSets: readonly DataSet[];
  /** Sets of the ids RFC 7011 reserves (4-255), skipped. */
  readonly reservedSets: number;
}

function templateSet(view: DataView, start: number, end: number, options: boolean, into: IpfixMessage): void {
  const templates = into.templates as TemplateRecord[];
  const withdrawals = into.withdrawals as TemplateWithdrawal[];
  const setId = options ? OPTIONS_TEMPLATE_SET_ID : TEMPLATE_SET_ID;
  let at = start;
  // Fewer bytes than a record header left: padding (RFC 7011 section 3.3.1).
  while (end - at >= 4) {
    const templateId = view.getUint16(at);
    const fieldCount = view.getUint16(at + 2);
    if (fieldCount === 0) {
      if (templateId !== setId && templateId < MIN_DATA_SET_ID) {
        throw new IpfixDecodeError(`withdrawal of template id ${templateId} at byte ${at}: template ids start at 256`);
      }
      withdrawals.push({ templateId, options, all: templateId === setId });
      at += 4;
      continue;
    }
    if (templateId < MIN_DATA_SET_ID) throw new IpfixDecodeError(`template id ${templateId} at byte ${at}: template ids start at 256`);
    let scopeFieldCount = 0;
    if (options) {
      if (end - at < 6) throw new IpfixDecodeError(`options template ${templateId} at byte ${at} is cut short`);
      scopeFieldCount = view.getUint16(at + 4);
      if (scopeFieldCount === 0 || scopeFieldCount > fieldCount) {
        throw new IpfixDecodeError(
          `options template ${templateId} has ${scopeFieldCount} scope fields of ${fieldCount}: 1 to ${fieldCount} expected`,
        );
      }
      at += 6;
    } else {
      at += 4;
    }
    const fields: FieldSpecifier[] = [];
    for (let i = 0; i < fieldCount; i++) {
      if (end - at < 4) throw new IpfixDecodeError(`template ${templateId}: field ${i + 1} of ${fieldCount} runs past its set`);
      const raw = view.getUint16(at);
      const length = view.getUint16(at + 2);
      at += 4;
      let enterprise = 0;
      if ((raw & ENTERPRISE_BIT) !== 0) {
        if (end - at < 4) throw new IpfixDecodeError(`template ${templateId}: field ${i + 1}'s enterprise number runs past its set`);
        enterprise = view.getUint32(at);
        at += 4;
      }
      fields.push({ id: raw & ~ENTERPRISE_BIT, enterprise, length });
    }
    templates.push({ templateId, scopeFieldCount, options, fields });
  }
}

/**
 * Reads one IPFIX message: its header and the structure of every set. Nothing is decoded with a
 * template here (that needs the exporter's templates: see TemplateStore). All or nothing: a
 * message any part of which contradicts its lengths throws IpfixDecodeError, and nothing of it
 * is used.
 */
export function parseMessage(bytes: Uint8Array): IpfixMessage {
  if (bytes.byteLength < MESSAGE_HEADER_BYTES) {
    throw new IpfixDecodeError(`${bytes.byteLength} bytes: shorter than the 16-byte IPFIX message header`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint16(0);
  if (version !== IPFIX_VERSION) {
    throw new IpfixDecodeError(`version ${version}: not an IPFIX message (version 10)${version === 9 ? '; NetFlow v9 is not read' : ''}`);
  }
  const length = view.getUint16(2);
  if (length !== bytes.byteLength) {
    throw new IpfixDecodeError(`the header says ${length} bytes, the datagram has ${bytes.byteLength}`);
  }
  const message: IpfixMessage = {
    exportTime: view.getUint32(4),
    sequenceNumber: view.getUint32(8),
    observationDomainId: view.getUint32(12),
    templates: [],
    withdrawals: [],
    dataSets: [],
    reservedSets: 0,
  };
  for (let at = MESSAGE_HEADER_BYTES; at < length;) {
    if (length - at < SET_HEADER_BYTES) throw new IpfixDecodeError(`${length - at} stray bytes after the last set`);
    const setId = view.getUint16(at);
    const setLength = view.getUint16(at + 2);
    if (setLength < SET_HEADER_BYTES || at + setLength > length) {
      throw new IpfixDecodeError(`set ${setId} at byte ${at} has length ${setLength}: it must fit the message's ${length} bytes`);
    }
    const start = at + SET_HEADER_BYTES;
    const end = at + setLength;
    if (setId === TEMPLATE_SET_ID || setId === OPTIONS_TEMPLATE_SET_ID) {
      templateSet(view, start, end, setId === OPTIONS_TEMPLATE_SET_ID, message);
    } else if (setId >= MIN_DATA_SET_ID) {
      (message.dataSets as DataSet[]).push({ templateId: setId, records: bytes.subarray(start, end) });
    } else {
      (message as { reservedSets: number }).reservedSets++;
    }
    at = end;
  }
  return message;
}

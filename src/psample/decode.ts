import { addon, NATIVE_LITTLE_ENDIAN } from '../native/binding';
import { PsampleBatch } from './batch';
import type { PsampleSample } from './sample';
import { fromNativeError, InvalidOptionError, PsampleDecodeError } from './errors';
import { STAT, statValues } from './stats';
import type { PsampleMessage } from './types';

export interface DecodePsampleOptions {
  /** Only messages of this netlink family; default: any generic-netlink family id. */
  familyId?: number;
}

/**
 * Decodes psample netlink messages (one datagram: one or more messages back to back) with the
 * same native parser the live reader uses. Throws PsampleDecodeError when any message is
 * truncated or garbled, rather than returning a partial answer that looks complete.
 */
export function decodePsample(bytes: Uint8Array, options: DecodePsampleOptions = {}): PsampleMessage[] {
  return decodePsampleSamples(bytes, options).map((sample) => sample.toObject());
}

/** @internal decodePsample(), the messages left in their batch records (for the native JSON lines). */
export function decodePsampleSamples(bytes: Uint8Array, options: DecodePsampleOptions = {}): PsampleSample[] {
  const familyId = options.familyId ?? 0;
  if (!Number.isInteger(familyId) || familyId < 0 || familyId > 0xffff) {
    throw new InvalidOptionError(`familyId must be an integer from 0 to 65535, got ${String(familyId)}`);
  }
  const stats = statValues();
  let decoded: ReturnType<typeof addon.decode>;
  try {
    decoded = addon.decode(bytes, familyId, stats);
  } catch (error) {
    throw fromNativeError(error);
  }
  const malformed = stats[STAT.malformed]!;
  if (malformed > 0) {
    throw new PsampleDecodeError(
      `${malformed} malformed netlink message(s) in ${bytes.byteLength} bytes: ` +
        'give whole psample messages as the kernel sends them, starting with the 16-byte nlmsghdr',
    );
  }
  const [buffer, count] = decoded;
  return [...new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN)];
}

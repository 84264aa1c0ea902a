import { OvnPsampleError } from '../errors';

/** A capture file (pcap, pcapng) cannot be read: not a capture, cut short, or of a link type without IP. */
export class CaptureFileError extends OvnPsampleError {
  constructor(message: string) {
    super('CAPTURE_FILE', message);
  }
}

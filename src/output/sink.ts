import { closeSync, openSync, writeSync } from 'node:fs';
import { OvnPsampleError } from '../errors';

/** An output file could not be opened. */
export class OutputFileError extends OvnPsampleError {
  constructor(path: string, cause: Error) {
    super('OUTPUT_FILE', `Cannot write ${path} (${cause.message}): check that its directory exists and is writable.`, { cause });
  }
}

/** Where output goes: a file written synchronously, or a stream such as process.stdout. */
export type OutputTarget = { readonly path: string } | { readonly stream: NodeJS.WritableStream };

/** Flush at once past this many buffered bytes; otherwise once per turn of the event loop. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Buffers what one turn of the event loop writes (a batch of samples) into one write: one
 * syscall per batch instead of one per line. A file is written synchronously; a stream's own
 * backpressure applies (stdout pipes are synchronous on Linux). `onClosed` fires once when the
 * reader is gone (EPIPE), so the caller can stop.
 */
export class BufferedOutput {
  private readonly fd: number | undefined;
  private readonly stream: NodeJS.WritableStream | undefined;
  private parts: (string | Uint8Array)[] = [];
  private bytes = 0;
  private scheduled = false;
  private broken = false;
  private readonly onError = (error: NodeJS.ErrnoException): void => {
    this.broken = true;
    this.onClosed?.(error);
  };

  constructor(
    target: OutputTarget,
    private readonly onClosed?: (error: Error) => void,
  ) {
    if ('path' in target) {
      try {
        this.fd = openSync(target.path, 'w');
      } catch (error) {
        throw new OutputFileError(target.path, error as Error);
      }
    } else {
      this.stream = target.stream;
      this.stream.on('error', this.onError);
    }
  }

  write(chunk: string | Uint8Array): void {
    if (this.broken) return;
    this.parts.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes >= FLUSH_BYTES) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Writes `chunk`, after what is buffered, at once: for a caller that gathers a batch into one
   * chunk itself. True when none of it is held any more (a file, or a stream that wrote it
   * through, as stdout pipes and files do on Linux), so the caller may write over its bytes.
   */
  writeNow(chunk: string | Uint8Array): boolean {
    if (this.broken) return false;
    this.parts.push(chunk);
    return this.flush();
  }

  /** Writes what is buffered; true when the stream holds none of it afterwards. */
  flush(): boolean {
    this.scheduled = false;
    if (this.parts.length === 0 || this.broken) return !this.broken;
    const parts = this.parts;
    this.parts = [];
    this.bytes = 0;
    const data =
      parts.length === 1
        ? parts[0]!
        : parts.every((part) => typeof part === 'string')
          ? parts.join('')
          : Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
    if (this.fd !== undefined) {
      const buffer = typeof data === 'string' ? Buffer.from(data) : data;
      for (let offset = 0; offset < buffer.length;) offset += writeSync(this.fd, buffer, offset);
      return true;
    }
    const stream = this.stream!;
    stream.write(data);
    return 'writableLength' in stream && stream.writableLength === 0 && !this.broken;
  }

  /** Flushes and, for a file, closes it; a stream is left open (it may be stdout). */
  async close(): Promise<void> {
    this.flush();
    if (this.fd !== undefined) {
      closeSync(this.fd);
      return;
    }
    const stream = this.stream!;
    stream.off('error', this.onError);
    if (this.broken) return;
    // Resolves once what was handed to the stream is on its way (or the stream failed).
    await new Promise<void>((resolve) => stream.write('', () => resolve()));
  }
}

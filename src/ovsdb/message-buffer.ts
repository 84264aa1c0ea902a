/** Blocks grow with the message from the first size to the last, so small messages stay small. */
const FIRST_BLOCK_BYTES = 64 * 1024;
const LARGEST_BLOCK_BYTES = 4 * 1024 * 1024;

/**
 * The bytes of one message that spans many reads. Each read is copied into large blocks instead
 * of being kept, so the socket's small read buffers are reused at once rather than piling up
 * (they would hold the whole message a second time in the allocator's arenas).
 */
export class MessageBuffer {
  private blocks: Buffer[] = [];
  private used = 0;
  private total = 0;

  get length(): number {
    return this.total;
  }

  append(bytes: Buffer): void {
    let offset = 0;
    while (offset < bytes.length) {
      let block = this.blocks.at(-1);
      if (block === undefined || this.used === block.length) {
        const size = Math.min(LARGEST_BLOCK_BYTES, Math.max(FIRST_BLOCK_BYTES, this.total));
        block = Buffer.allocUnsafeSlow(Math.max(size, bytes.length - offset));
        this.blocks.push(block);
        this.used = 0;
      }
      const copied = bytes.copy(block, this.used, offset);
      this.used += copied;
      offset += copied;
    }
    this.total += bytes.length;
  }

  /** The gathered bytes followed by `tail`, as one Buffer; the buffer is empty afterwards. */
  take(tail: Buffer): Buffer {
    if (this.total === 0) {
      return tail;
    }
    const whole = Buffer.allocUnsafeSlow(this.total + tail.length);
    let offset = 0;
    for (const [index, block] of this.blocks.entries()) {
      offset += block.copy(whole, offset, 0, index === this.blocks.length - 1 ? this.used : block.length);
    }
    tail.copy(whole, offset);
    this.blocks = [];
    this.used = 0;
    this.total = 0;
    return whole;
  }
}

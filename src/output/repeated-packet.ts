/**
 * What a formatter made of the last packet's bytes, kept for the samples that repeat them: OVN
 * samples a packet at several stages of one datapath flow, and each stage is a sample of the same
 * bytes, right after the other (OVN 25.03 samples every established packet of an allow-related
 * ACL three times). Checking that the bytes are the same costs less than decoding them again.
 */
export class RepeatedPacket<T> {
  // A copy of the last bytes (a sample's are a view of a batch buffer the memo must not keep
  // alive), in a buffer reused while they fit.
  private copy = new Uint8Array(256);
  private length = -1;
  private proto = -1;
  private value: T | undefined;

  constructor(private readonly make: (bytes: Uint8Array, proto: number) => T) {}

  of(bytes: Uint8Array, proto: number): T {
    if (proto === this.proto && this.repeats(bytes)) return this.value!;
    const value = this.make(bytes, proto);
    if (bytes.byteLength > this.copy.byteLength) this.copy = new Uint8Array(bytes.byteLength);
    this.copy.set(bytes);
    this.length = bytes.byteLength;
    this.proto = proto;
    this.value = value;
    return value;
  }

  private repeats(bytes: Uint8Array): boolean {
    const length = bytes.byteLength;
    if (length !== this.length) return false;
    const copy = this.copy;
    // From the end: packets of one flow share their first headers and differ in the payload,
    // checksums and IP id.
    for (let i = length - 1; i >= 0; i--) if (bytes[i] !== copy[i]) return false;
    return true;
  }
}

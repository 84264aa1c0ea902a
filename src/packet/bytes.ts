/** Big-endian reads; callers check bounds first, so these stay branch-free on the hot path. */
export function readU16(data: Uint8Array, offset: number): number {
  return ((data[offset] as number) << 8) | (data[offset + 1] as number);
}

export function readU32(data: Uint8Array, offset: number): number {
  // Multiplying the top byte keeps the result unsigned where `<< 24` would go negative.
  return (
    (data[offset] as number) * 0x1000000 +
    (((data[offset + 1] as number) << 16) |
      ((data[offset + 2] as number) << 8) |
      (data[offset + 3] as number))
  );
}

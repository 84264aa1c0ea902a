// The text forms of the addresses in psample's tunnel metadata. The sampled packet's addresses
// are written by the native decoder (native/packet/packet_json.cc) in the same forms.

function readU16(data: Uint8Array, offset: number): number {
  return ((data[offset] as number) << 8) | (data[offset + 1] as number);
}

export function formatIpv4(data: Uint8Array, offset: number): string {
  return `${data[offset]}.${data[offset + 1]}.${data[offset + 2]}.${data[offset + 3]}`;
}

/** RFC 5952: lowercase, no leading zeros, the longest (first on a tie) run of 2+ zero groups as "::". */
export function formatIpv6(data: Uint8Array, offset: number): string {
  let bestStart = -1;
  let bestLength = 1;
  let runStart = -1;
  for (let group = 0; group < 8; group++) {
    if (readU16(data, offset + group * 2) === 0) {
      if (runStart < 0) runStart = group;
      const runLength = group - runStart + 1;
      if (runLength > bestLength) {
        bestStart = runStart;
        bestLength = runLength;
      }
    } else {
      runStart = -1;
    }
  }
  // RFC 5952 section 5: IPv4-mapped addresses keep the dotted quad operators recognise.
  if (bestStart === 0 && bestLength === 5 && readU16(data, offset + 10) === 0xffff) {
    return '::ffff:' + formatIpv4(data, offset + 12);
  }
  let text = '';
  let separator = '';
  for (let group = 0; group < 8; group++) {
    if (group === bestStart) {
      text += '::';
      separator = '';
      group += bestLength - 1;
      continue;
    }
    text += separator + readU16(data, offset + group * 2).toString(16);
    separator = ':';
  }
  return text;
}

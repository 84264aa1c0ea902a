/**
 * Pieces of JSON text for the serializers that write JSON lines field by field (no object is
 * built to be stringified): each gives what JSON.stringify gives for the same value.
 */

// Printable ASCII but '"' and '\': the characters JSON.stringify leaves as they are.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string: addresses, names and hex need no escaping, and are not scanned twice. */
export function jsonString(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** `,"name":value`, or nothing for an absent value, as JSON.stringify leaves out undefined members. */
export function member(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${value}`;
}

/** A JSON number member, left out when undefined. */
export function numberMember(name: string, value: number | undefined): string {
  return value === undefined ? '' : `,"${name}":${value}`;
}

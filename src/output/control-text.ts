// What the text outputs write of names from the OVN databases (policies, namespaces, pods, the
// decoder's sentences), which anyone who can write those databases chooses: a line break in one
// would forge a line of its own, an escape sequence would drive the operator's terminal. A tab
// stays (a readable separator); the other control characters are written as escapes.
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f]/g;
// The same, tested first: nearly every text has none, and a test allocates nothing.
const ANY_CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

const escape = (c: string): string => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** `text` with its control characters but tabs written as `\n`, `\r` or `\xNN`. */
export function escapeControl(text: string): string {
  return ANY_CONTROL.test(text) ? text.replace(CONTROLS, escape) : text;
}

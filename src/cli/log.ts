import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { writeSync } from 'node:fs';
import type { LogFormat } from './options';

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: '', 40: 'warning', 50: 'error', 60: 'error' };
/** Record keys that are pino's own, not the caller's fields. */
const FRAME = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

function fieldText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /\s/.test(text) ? JSON.stringify(text) : text;
}

/** One line per record for a person: "ovn-psample: warning: message key=value ...". */
function textDestination(): DestinationStream {
  return {
    write(line: string): void {
      const record = JSON.parse(line) as Record<string, unknown>;
      const level = LEVEL_NAMES[record.level as number] ?? '';
      const fields = Object.entries(record)
        .filter(([key]) => !FRAME.has(key))
        .map(([key, value]) => `${key}=${fieldText(value)}`);
      writeSync(
        2,
        `ovn-psample: ${level === '' ? '' : `${level}: `}${typeof record.msg === 'string' ? record.msg : ''}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}\n`,
      );
    },
  };
}

/**
 * The CLI's logger: records on stderr, never on stdout where the data goes. JSON lines (pino's
 * own format) for machines; a line of text per record when stderr is a terminal, unless told.
 * Writes are synchronous, so what is logged before an exit is never lost.
 */
export function createLogger(options: { level?: LevelWithSilent; format?: LogFormat }): Logger {
  const format = options.format ?? (process.stderr.isTTY ? 'text' : 'json');
  const destination = format === 'json' ? pino.destination({ fd: 2, sync: true }) : textDestination();
  return pino({ level: options.level ?? 'info', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

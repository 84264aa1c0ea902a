import type { TopRow, TopSort } from '../events/top-table';
import { escapeControl } from './control-text';

export const SORT_NAMES: Readonly<Record<TopSort, string>> = {
  rate: 'packets/s',
  last: 'last seen',
  verdict: 'verdict',
  namespace: 'namespace',
};
export const KEYS_HELP = 'keys: p packets/s, l last seen, v verdict, n namespace, q quit';

function lastSeen(row: TopRow, nowMs: number): string {
  const seconds = (nowMs - row.lastSeenMs) / 1000;
  return seconds < 1 ? 'now' : `${seconds.toFixed(0)}s ago`;
}

/** The table of top rows as lines: a header, then one line per row, columns aligned. */
export function topLines(rows: readonly TopRow[], nowMs: number, limit = Infinity): string[] {
  const table = [
    ['PKTS/S', 'PACKETS', 'LAST SEEN', 'VERDICT', 'POLICY', 'NAMESPACE', 'SOURCE → DESTINATION'],
    ...rows
      .slice(0, limit)
      .map((row) => [
        row.rate.toFixed(1),
        String(Math.round(row.packets)),
        lastSeen(row, nowMs),
        row.verdict.toUpperCase(),
        escapeControl(row.policy),
        escapeControl(row.namespace),
        escapeControl(`${row.src} → ${row.dst}`),
      ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  return table.map((line) =>
    line
      .map((cell, column) => (column < 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

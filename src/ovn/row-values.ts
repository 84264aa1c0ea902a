import type { Row } from '../ovsdb/row';
import type { ExternalIds } from './external-ids';

const NO_IDS: ExternalIds = new Map();

/** Typed reads of cached columns; a value of an unexpected shape reads as absent, never throws. */
export function stringColumn(row: Row, column: string): string | undefined {
  const value = row[column];
  return typeof value === 'string' ? value : undefined;
}

export function numberColumn(row: Row, column: string): number | undefined {
  const value = row[column];
  return typeof value === 'number' ? value : undefined;
}

export function mapColumn(row: Row, column: string): ExternalIds {
  const value = row[column];
  return value instanceof Map ? value : NO_IDS;
}

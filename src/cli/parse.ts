import { CliUsageError } from './errors';

/** A whole number of at least `min` (and at most `max`), or a usage error naming the flag. */
export function wholeNumber(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new CliUsageError(
      `${flag} ${value}: give a whole number${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}`,
    );
  }
  return n;
}

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

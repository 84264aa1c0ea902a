import { STAT_NAMES, type PsampleStats } from '../native/abi.generated';

/** Index of each counter in the Float64Array the addon fills (STAT_NAMES order). */
export const STAT = Object.fromEntries(STAT_NAMES.map((name, index) => [name, index])) as {
  readonly [Name in keyof PsampleStats]: number;
};

export function statValues(): Float64Array {
  return new Float64Array(STAT_NAMES.length);
}

export function statsObject(values: Float64Array): PsampleStats {
  const stats = {} as Record<keyof PsampleStats, number>;
  STAT_NAMES.forEach((name, index) => {
    stats[name] = values[index]!;
  });
  return stats;
}

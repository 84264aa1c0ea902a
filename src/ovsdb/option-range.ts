import { OvsdbOptionError } from '../errors';

/** Returns `value`, or throws OvsdbOptionError naming the option when it is below `minimum` or not finite. */
export function atLeast(name: string, value: number, minimum: number): number {
  if (!Number.isFinite(value) || value < minimum) {
    throw new OvsdbOptionError(`${name} is ${value}; it must be a finite number of at least ${minimum}.`);
  }
  return value;
}

/** Returns `value`, or throws OvsdbOptionError naming the option when it is above `maximum`. */
export function atMost(name: string, value: number, maximum: number): number {
  if (value > maximum) {
    throw new OvsdbOptionError(`${name} is ${value}; it must be at most ${maximum}.`);
  }
  return value;
}

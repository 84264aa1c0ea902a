import { describe, expect, it } from 'vitest';
import { OvsdbOptionError } from '../../src/errors';
import { Backoff } from '../../src/ovsdb/backoff';

describe('Backoff', () => {
  it('grows exponentially up to the cap, with the jitter fraction drawn at random', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0.5 });
    const bases = [100, 200, 400, 800, 1000, 1000];
    for (const base of bases) {
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(base * 0.5);
      expect(delay).toBeLessThanOrEqual(base);
    }
    backoff.reset();
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });

  it('spreads clients apart: delays of one step differ across draws', () => {
    const delays = new Set(Array.from({ length: 50 }, () => new Backoff({ initialMs: 10_000 }).next()));
    expect(delays.size).toBeGreaterThan(10);
  });

  it('is exact without jitter', () => {
    const backoff = new Backoff({ initialMs: 250, jitter: 0 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([250, 500, 1000]);
  });

  it.each([
    ['initialMs 0 (a reconnection spin)', { initialMs: 0 }],
    ['a factor below 1 (shrinking delays)', { factor: 0.5 }],
    ['a non-finite ceiling', { maxMs: Number.POSITIVE_INFINITY }],
  ])('refuses %s with a typed error naming the option', (_what, options) => {
    expect(() => new Backoff(options)).toThrow(OvsdbOptionError);
    expect(() => new Backoff(options)).toThrow(/backoff\.(initialMs|factor|maxMs) is .* at least/);
  });
});

import { Option } from 'commander';
import { CliUsageError } from './errors';
import { wholeNumber } from './parse';

/**
 * The CLI writes each batch out rather than reacting to each sample, and a stream of lines that
 * comes a fifth of a second at a time still reads as live: so `listen` takes samples from the
 * reader thread every 200 ms while they flow, which saves most of the fixed cost of a hand-off (a
 * wake-up of both threads, a call into JavaScript, a write) that the library's adaptive 1–10 ms
 * interval pays for its latency. Measured in the lab at 10,000 samples/s (qemu/TCG, where a
 * thread that wakes up pays for cold caches): 200 ms costs 9 % less CPU per sample than 50 ms.
 * `watch` and `top` take them every 20 ms: the samples of one packet are grouped when they reach
 * JavaScript within the group window (50 ms), which a hand-off as long as the window would split.
 */
export const LISTEN_DELIVERY_INTERVAL_MS = 200;
export const GROUPING_DELIVERY_INTERVAL_MS = 20;

export const deliveryIntervalOption = (defaultMs: number): Option =>
  new Option('--delivery-interval <ms>', 'while samples flow, take them from the reader thread this often (1-1000 ms)').default(
    String(defaultMs),
  );

export function deliveryIntervalMs(value: string): number {
  return wholeNumber('--delivery-interval', value, 1, 1000);
}

/** The interval for a command that groups samples of one packet within `groupWindowMs` (0: no grouping). */
export function groupingDeliveryIntervalMs(value: string, groupWindowMs: number): number {
  const interval = deliveryIntervalMs(value);
  if (groupWindowMs > 0 && interval >= groupWindowMs) {
    throw new CliUsageError(
      `--delivery-interval ${interval} must be shorter than --group-window ${groupWindowMs}: the samples of one packet would reach the grouping in different hand-offs ` +
        'and be shown as separate packets (or use --no-group)',
    );
  }
  return interval;
}

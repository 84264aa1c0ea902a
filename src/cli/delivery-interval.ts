import { Option } from 'commander';
import { wholeNumber } from './parse';

/**
 * The CLI writes each batch out rather than reacting to each sample, and a person reading it does
 * not see 20 ms: so it takes samples from the reader thread every 20 ms while they flow, which
 * saves most of the fixed cost of a hand-off (a wake-up of both threads, a call into JavaScript, a
 * write) that the library's adaptive 1–10 ms interval pays for its latency.
 */
export const DEFAULT_CLI_DELIVERY_INTERVAL_MS = 20;

export const deliveryIntervalOption = (): Option =>
  new Option('--delivery-interval <ms>', 'while samples flow, take them from the reader thread this often (1-1000 ms)').default(
    String(DEFAULT_CLI_DELIVERY_INTERVAL_MS),
  );

export function deliveryIntervalMs(value: string): number {
  return wholeNumber('--delivery-interval', value, 1, 1000);
}

import { Option } from 'commander';
import { wholeNumber } from './parse';

/**
 * How many samples the CLI holds between the reader thread and its output while the output falls
 * behind: a burst faster than the output is held, not dropped, up to this many samples or the
 * reader's 512 MiB, whichever comes first. Twice the library's default: in the lab, 5 s at 82,000
 * OVN samples/s overflowed 262,144 by 7,416 samples (1.8 %) while `listen --nb --sb` wrote about
 * 37,000 lines/s. Held samples take about 400 bytes each (peak RSS 191 MB with 262,144 held).
 */
export const CLI_QUEUE_CAPACITY = 524_288;

export const queueCapacityOption = (): Option =>
  new Option('--queue-capacity <samples>', 'samples held while the output falls behind, before any is dropped').default(
    String(CLI_QUEUE_CAPACITY),
  );

export function queueCapacity(value: string): number {
  return wholeNumber('--queue-capacity', value, 1, 2 ** 31 - 1);
}

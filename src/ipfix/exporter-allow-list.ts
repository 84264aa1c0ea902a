import { cidrContains, parseCidr, type Cidr } from '../packet/cidr';
import { IpfixOptionError } from './errors';

/** Only this host's own exporters, unless told otherwise: loopback. */
export const DEFAULT_EXPORTERS: readonly string[] = ['127.0.0.0/8', '::1'];

/** Past this many distinct senders the verdict cache starts over: a spoofed flood must not grow it. */
const MAX_CACHED = 4096;

/**
 * The exporters whose datagrams are decoded: addresses and CIDR blocks. A datagram from anyone
 * else is counted (rejectedExporter) and dropped unread: IPFIX over UDP has no authentication,
 * and whoever can reach the port could otherwise forge samples.
 */
export class ExporterAllowList {
  readonly #blocks: readonly Cidr[];
  readonly #verdicts = new Map<string, boolean>();

  constructor(entries: readonly string[]) {
    this.#blocks = entries.map((entry) => {
      const block = parseCidr(entry);
      if (block === undefined)
        throw new IpfixOptionError(`exporters: "${entry}" is neither an IP address nor a CIDR block (10.0.0.0/8, fd00::/64)`);
      return block;
    });
  }

  allows(address: string): boolean {
    let verdict = this.#verdicts.get(address);
    if (verdict === undefined) {
      // A v4-mapped sender (an IPv6 socket hearing IPv4) is judged by its IPv4 address.
      const plain = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
      verdict = this.#blocks.some((block) => cidrContains(block, plain));
      if (this.#verdicts.size >= MAX_CACHED) this.#verdicts.clear();
      this.#verdicts.set(address, verdict);
    }
    return verdict;
  }
}

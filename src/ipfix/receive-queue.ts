import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** What the kernel says of one UDP socket: its receive queue and the datagrams it dropped. */
export interface UdpSocketState {
  /** Bytes of datagrams queued, not read yet. */
  readonly queuedBytes: number;
  /** Datagrams dropped (sk_drops): the receive buffer was full. */
  readonly drops: number;
}

/** The inodes of this process's sockets, from /proc/self/fd. */
function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match !== null) inodes.add(match[1]!);
    } catch {
      // An fd closed while listing.
    }
  }
  return inodes;
}

/**
 * Node's dgram has no SO_RXQ_OVFL (the per-datagram drop count) nor SO_MEMINFO; the least bad
 * way left is what /proc/net/udp (udp6) prints for the socket: its receive queue and `drops`,
 * the kernel's exact sk_drops. The socket is found once, by its local port among this process's
 * own socket inodes; each read() is then one read of that file (a line per UDP socket of the
 * network namespace), done when the source reports, not on a timer.
 */
export class UdpSocketProbe {
  readonly #file: string;
  readonly #inode: string;

  private constructor(file: string, inode: string) {
    this.#file = file;
    this.#inode = inode;
  }

  /** The probe of the socket bound to `port` in this process, or undefined when /proc does not show it. */
  static find(family: 4 | 6, port: number): UdpSocketProbe | undefined {
    const file = family === 4 ? '/proc/net/udp' : '/proc/net/udp6';
    try {
      const inodes = ownSocketInodes();
      for (const fields of lines(file)) {
        const local = fields[1]!;
        if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && inodes.has(fields[9]!)) {
          return new UdpSocketProbe(file, fields[9]!);
        }
      }
    } catch {
      // No /proc (or not this one): drops are then unknown.
    }
    return undefined;
  }

  read(): UdpSocketState | undefined {
    try {
      for (const fields of lines(this.#file)) {
        if (fields[9] !== this.#inode) continue;
        const queues = fields[4]!;
        return {
          queuedBytes: Number.parseInt(queues.slice(queues.indexOf(':') + 1), 16),
          drops: Number(fields[12]),
        };
      }
    } catch {
      // Unreadable now: nothing new to say.
    }
    return undefined;
  }
}

function* lines(file: string): Generator<string[]> {
  const text = readFileSync(file, 'latin1');
  let start = text.indexOf('\n') + 1;
  while (start > 0 && start < text.length) {
    const end = text.indexOf('\n', start);
    yield text
      .slice(start, end < 0 ? text.length : end)
      .trim()
      .split(/\s+/);
    start = end + 1;
  }
}

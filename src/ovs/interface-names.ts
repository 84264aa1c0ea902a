import { readdirSync, readFileSync } from 'node:fs';
import type { LocalOvs } from './local-ovs';
import { ovsInterfaceName } from './interfaces';

/** How often the kernel's list is read again for an ifindex it did not have. */
const RESCAN_MS = 1000;

/**
 * Names the interface a sample came in on: the OVS Interface with that ifindex when the OVS
 * database is at hand (the datapath's own ports), else this namespace's /sys/class/net.
 */
export class InterfaceNames {
  private kernel = new Map<number, string>();
  private scannedAt = -Infinity;

  constructor(
    private readonly ovs: LocalOvs | undefined,
    /** /sys/class/net shows this process's namespace: only use it when the samples come from there. */
    private readonly useSysfs: boolean,
  ) {}

  readonly name = (ifindex: number): string | undefined => {
    const fromOvs = this.ovs === undefined ? undefined : ovsInterfaceName(this.ovs, ifindex);
    if (fromOvs !== undefined || !this.useSysfs) return fromOvs;
    let name = this.kernel.get(ifindex);
    if (name === undefined && Date.now() - this.scannedAt > RESCAN_MS) {
      this.scan();
      name = this.kernel.get(ifindex);
    }
    return name;
  };

  private scan(): void {
    this.scannedAt = Date.now();
    const found = new Map<number, string>();
    try {
      for (const device of readdirSync('/sys/class/net')) {
        try {
          found.set(Number(readFileSync(`/sys/class/net/${device}/ifindex`, 'utf8')), device);
        } catch {
          // The device went away between the listing and the read.
        }
      }
    } catch {
      // No sysfs (a container without it): names stay unknown.
    }
    this.kernel = found;
  }
}

import { addon, type NativeInjector } from '../native/binding';
import { fromNativeError, InvalidOptionError } from './errors';
import { netnsPath } from './options';

export interface InjectorOptions {
  protocol: 'usersock' | 'generic';
  /** Multicast group to send to, 1-32. */
  groupId: number;
  /** Send from this network namespace (name, path or pid). */
  netns?: string | number;
}

/** Multicasts raw netlink messages (e.g. from encodePsample) to readers opened with a matching `source`. */
export class PsampleInjector {
  readonly #native: NativeInjector;

  constructor(options: InjectorOptions) {
    if (options.protocol !== 'usersock' && options.protocol !== 'generic') {
      throw new InvalidOptionError("protocol must be 'usersock' or 'generic'");
    }
    try {
      this.#native = new addon.NativeInjector({
        protocol: options.protocol,
        groupId: options.groupId,
        netns: netnsPath(options.netns),
      });
    } catch (error) {
      throw fromNativeError(error);
    }
  }

  send(message: Uint8Array): void {
    try {
      this.#native.send(message);
    } catch (error) {
      throw fromNativeError(error);
    }
  }

  sendBatch(messages: Iterable<Uint8Array>): void {
    for (const message of messages) this.send(message);
  }

  close(): void {
    this.#native.close();
  }
}

export function createInjector(options: InjectorOptions): PsampleInjector {
  return new PsampleInjector(options);
}

import { existsSync, readdirSync } from 'node:fs';
import { run } from './shell';

/** The guest kernel has the lab's features as modules; loading an already loaded one is a no-op. */
export function loadModules(...names: string[]): void {
  for (const name of names) run('modprobe', [name]);
}

/**
 * Unloads NAME after every module that uses it (/sys/module/NAME/holders), as `rmmod` would
 * refuse otherwise; retries while their last users (a datapath being deleted) let go.
 */
export async function unloadModule(name: string): Promise<void> {
  if (!existsSync(`/sys/module/${name}`)) return;
  for (const holder of readdirSync(`/sys/module/${name}/holders`)) await unloadModule(holder);
  for (let attempt = 1; ; attempt++) {
    try {
      run('rmmod', [name]);
      return;
    } catch (error) {
      if (attempt === 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

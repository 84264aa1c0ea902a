import { run } from './shell';

/** The guest kernel has the lab's features as modules; loading an already loaded one is a no-op. */
export function loadModules(...names: string[]): void {
  for (const name of names) run('modprobe', [name]);
}

import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.join(__dirname, '..', '..');

/** podman with the project's settings (runc, explicit ulimits: scripts/image/containers.conf), nothing changed in /etc. */
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: path.join(root, 'scripts', 'image', 'containers.conf') };

export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { env: PODMAN_ENV, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** What a container wrote, stdout and stderr (its log records) together. */
export async function podmanLogs(name: string): Promise<string> {
  const { stdout, stderr } = await run('podman', ['logs', name], { env: PODMAN_ENV, maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

/** The revision `npm run image` stamps on the image it builds from this checkout (build.sh says which). */
function checkoutRevision(): string {
  return execFileSync('bash', [path.join(root, 'scripts', 'image', 'build.sh'), '--revision'], { encoding: 'utf8' }).trim();
}

/**
 * The amd64 image `npm run image` built from this checkout (`npm test` builds it before vitest
 * runs); an image of another revision is refused, so a test never runs code it was not given.
 */
export async function projectImage(): Promise<string> {
  const version = (
    JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: root, encoding: 'utf8' })) as {
      version: string;
    }
  ).version;
  const tag = `localhost/ovn-psample:${version}-amd64`;
  let revision: string;
  try {
    revision = (await podman('image', 'inspect', '--format', '{{index .Labels "org.opencontainers.image.revision"}}', tag)).trim();
  } catch {
    throw new Error(`no image ${tag}: build it with 'npm run image' (npm test does)`);
  }
  const wanted = checkoutRevision();
  if (revision !== wanted) throw new Error(`${tag} was built from ${revision}, not this checkout (${wanted}): run 'npm run image' again`);
  return tag;
}

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The OVN release whose schemas the tests serve: the one Debian trixie ships. */
export const OVN_SCHEMA_RELEASE = '25.03';

/** Stable across runs so the package is fetched once; override with $OVN_PSAMPLE_CACHE. */
export function testCacheDir(): string {
  return process.env.OVN_PSAMPLE_CACHE ?? resolve(__dirname, '../../node_modules/.cache/ovn-psample');
}

// A private apt configuration ($1 = apt state dir): the host's bookworm sources and package
// status stay untouched. The script runs under flock because test files run in parallel processes.
const FETCH_SCRIPT = `
set -eu
apt_dir=$1; target=$2; release=$3
[ -f "$target/ovn-nb.ovsschema" ] && [ -f "$target/ovn-sb.ovsschema" ] && exit 0
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
printf 'Types: deb\\nURIs: http://deb.debian.org/debian\\nSuites: trixie\\nComponents: main\\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\\n' > "$apt_dir/trixie.sources"
apt() {
  apt-get -q -o Dir::Etc::sourcelist="$apt_dir/trixie.sources" -o Dir::Etc::sourceparts=/dev/null \\
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir/archives" \\
    -o Dir::State::status=/dev/null -o APT::Sandbox::User=root "$@"
}
work=$(mktemp -d "$apt_dir/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
apt update >&2
(cd "$work" && apt download ovn-central >&2)
deb=$(ls "$work"/ovn-central_*.deb)
version=$(dpkg-deb -f "$deb" Version)
case "$version" in "$release".*) ;; *) echo "trixie ovn-central is $version, not $release.x" >&2; exit 1 ;; esac
dpkg-deb -x "$deb" "$work/x"
mkdir -p "$work/out"
cp "$work/x/usr/share/ovn/ovn-nb.ovsschema" "$work/x/usr/share/ovn/ovn-sb.ovsschema" "$work/out/"
echo "Debian trixie ovn-central $version, /usr/share/ovn" > "$work/out/PROVENANCE"
rm -rf "$target"
mv "$work/out" "$target"
`;

/** Paths of the real OVN NB and SB schemas, extracted from Debian trixie's ovn-central package. */
export async function ovnSchemaPaths(): Promise<{ nb: string; sb: string }> {
  const cache = testCacheDir();
  const dir = join(cache, `ovn-schemas-${OVN_SCHEMA_RELEASE}`);
  const paths = { nb: join(dir, 'ovn-nb.ovsschema'), sb: join(dir, 'ovn-sb.ovsschema') };
  if (existsSync(paths.nb) && existsSync(paths.sb)) {
    return paths;
  }
  await mkdir(cache, { recursive: true });
  try {
    await run('flock', [join(cache, 'apt.lock'), 'sh', '-c', FETCH_SCRIPT, 'sh', join(cache, 'apt-trixie'), dir, OVN_SCHEMA_RELEASE], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `Could not fetch Debian trixie's ovn-central for the OVN ${OVN_SCHEMA_RELEASE} schemas (needs apt-get, dpkg-deb, flock and the Debian mirror): ${stderr.slice(-2000)}`,
      { cause: error },
    );
  }
  return paths;
}

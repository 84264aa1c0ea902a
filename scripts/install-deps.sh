#!/bin/bash
# Installs what a fresh Debian (bookworm or newer) machine lacks to build and test ovn-psample,
# then the npm dependencies. Run by `npm test` (pretest) and .ci/run; it only acts on what is
# missing, so running it again costs a second. (`npm run demo` / the lab install their own host
# tools: scripts/lab/host-deps.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ make python3           # node-gyp
  cmake clang                # the parser's native tests and fuzzer (cmake-js path)
  clang-format clang-tidy    # npm run lint: native/'s formatter and linter
  iproute2 util-linux        # netns tests, setpriv for the unprivileged test
  libcap2-bin                # setcap: the file-capability test (test/psample/privileges.kernel.test.ts)
  openvswitch-common openssl # ovsdb-server and ovsdb-tool for the OVSDB/OVN tests, PKI for ssl remotes
  openvswitch-switch         # ovs-vswitchd in userspace (dummy datapath): the real IPFIX exporter of test/ipfix
  tshark                     # cross-checks the packet decoder and reads watch --pcapng back
  prometheus                 # scrapes watch --metrics in its test (started by the test, loopback only)
  tmux                       # drives ovn-psample top as a person would in its test
  qemu-system-x86 debootstrap e2fsprogs debian-archive-keyring  # the real-kernel lab
  g++-aarch64-linux-gnu g++-s390x-linux-gnu  # the s390x prebuild; arm64's binutils for clang (npm run build:cross)
  podman buildah runc uidmap catatonit  # npm run image and the container tests (runc: crun refuses hybrid cgroups; catatonit: kube play's pause)
  qemu-user-static binfmt-support  # the arm64 unit tests and the s390x byte-order check under qemu-user
  qemu-system-arm cpio xz-utils  # the arm64 prebuild on a real arm64 kernel (scripts/cross/arm64-kernel.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing Debian packages: ${missing[*]}: install them (as root: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  apt-get update -q
  echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# libFuzzer and the sanitizers ship with the compiler-rt of clang's own version.
clang_major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
runtime="libclang-rt-${clang_major}-dev"
if ! dpkg-query -W -f '${Status}' "$runtime" 2>/dev/null | grep -q 'install ok installed'; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing Debian package: $runtime: install it (as root: apt-get install $runtime)" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$runtime"
fi

# The Debian 11 sysroots the x64 and arm64 prebuilds are compiled against (scripts/cross/sysroot.sh):
# ~10 MB of .debs per machine downloaded once into its cache; instant when present.
for arch in x64 arm64; do bash scripts/cross/sysroot.sh "$arch" >/dev/null; done

# node-gyp must build against the installed Node headers: there is no network for downloads.
export npm_config_nodedir=/usr
# --ignore-scripts: the project's own install script (node-gyp-build) would compile the addon that
# `npm run build` compiles next, a minute of both cores; no dependency has an install script.
if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
  npm ci --no-audit --no-fund --ignore-scripts
fi

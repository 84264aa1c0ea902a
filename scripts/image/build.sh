#!/bin/bash
# npm run image: the ovn-psample OCI image for linux/amd64 and linux/arm64, built offline (only
# Debian's and npm's registries) and reproducibly, exported as one OCI archive whose index lists
# both. Root, Debian 12 host with podman and buildah (scripts/install-deps.sh).
#
# Each image is FROM scratch: Node 24 LTS (the official binary, npm package node-linux-ARCH, at
# NODE_VERSION), the run-time libraries it links (Debian trixie's libc6, libstdc++6, libgcc-s1 and
# their closure, unpacked with dpkg-deb -x), coreutils' env alone (the CLI's '#!/usr/bin/env node'
# needs it; there is no shell), and `npm install --omit=dev` of the packed project with only that
# machine's prebuild. User 65534; ENTRYPOINT ["ovn-psample"]. Every file and the image's creation
# time carry SOURCE_DATE_EPOCH (the last commit's time), so the same commit and the same package
# versions (listed in the image, /usr/share/ovn-psample/versions.txt) give the same digests.
#
# usage: scripts/image/build.sh [--out FILE] [--arch amd64|arm64]...
#   default: .image/ovn-psample-VERSION.oci.tar with both arches; prints the index digest and sizes
#        scripts/image/build.sh --revision
#   prints the revision label an image built from this checkout gets (its users check an image against it)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/scripts/image"
export CONTAINERS_CONF="$HERE/containers.conf"
# Node 24 "Krypton" LTS: upstream security support until April 2028 (Node 20, trixie's, ended in April 2026).
NODE_VERSION=24.21.0
MIRROR=${OVN_PSAMPLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
RUNTIME_PACKAGES=(libc6 libstdc++6 libgcc-s1)
CACHE=${OVN_PSAMPLE_IMAGE_CACHE:-/var/cache/ovn-psample-image}

out=
arches=()
cd "$ROOT"
# The commit, and -dirty when what the image runs differs from it.
revision=$(git rev-parse HEAD)$(git diff --quiet HEAD -- src native package.json || echo -dirty)
while [ $# -gt 0 ]; do
    case $1 in
        --revision) echo "$revision"; exit 0 ;;
        --out) out=$2; shift 2 ;;
        --arch) arches+=("$2"); shift 2 ;;
        *) echo "usage: $0 [--out FILE] [--arch amd64|arm64]..." >&2; exit 2 ;;
    esac
done
[ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64)
version=$(node -p "require('./package.json').version")
license=$(node -p "require('./package.json').license")
# package.json's repository when it names one (the project has none yet), else what built it.
source_url=${OVN_PSAMPLE_IMAGE_SOURCE:-$(node -p "require('./package.json').repository?.url ?? ''")}
out=${out:-$ROOT/.image/ovn-psample-$version.oci.tar}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
source_url=${source_url:-"git commit $revision of ovn-psample $version"}
started=$SECONDS

work=$(mktemp -d /tmp/ovn-psample-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$CACHE" "$(dirname "$out")"

# The project as npm publishes it (prepack cross-builds the arm64 and s390x prebuilds).
tgz=$(npm pack --silent --pack-destination "$work" | tail -1)
tgz="$work/$tgz"

node_arch() { case $1 in amd64) echo x64 ;; arm64) echo arm64 ;; esac; }

apt_for() {
    local arch=$1 dir="$CACHE/apt-$SUITE-$1"
    mkdir -p "$dir/lists/partial" "$dir/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main" >"$dir/sources.list"
    : >"$dir/status"
    APT=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
         -o Dir::State::Lists="$dir/lists" -o Dir::Cache::archives="$dir/archives"
         -o Dir::State::status="$dir/status" -o Debug::NoLocking=true
         -o APT::Architecture="$arch" -o APT::Architectures::="$arch")
}

rootfs_for() {
    local arch=$1 r=$2
    apt_for "$arch"
    apt-get "${APT[@]}" -qq update
    # An empty dpkg status: apt resolves the whole closure, as for a bare system.
    local debs
    debs=$(apt-get "${APT[@]}" -s -qq --no-install-recommends install "${RUNTIME_PACKAGES[@]}" coreutils |
        awk '/^Inst /{print $2}' | sort)
    apt-get "${APT[@]}" -qq -y --no-install-recommends install --download-only "${RUNTIME_PACKAGES[@]}" coreutils >/dev/null
    mkdir -p "$r/usr/share/ovn-psample" "$work/coreutils-$arch"
    for pkg in $debs; do
        local deb
        deb=$(ls "$CACHE/apt-$SUITE-$arch/archives/${pkg}"_*.deb | sort -V | tail -1)
        printf '%s %s\n' "$pkg" "$(dpkg-deb -f "$deb" Version)" >>"$r/usr/share/ovn-psample/versions.txt"
        case $pkg in
            coreutils) dpkg-deb -x "$deb" "$work/coreutils-$arch" ;;  # only env is kept
            libc6 | libstdc++6 | libgcc-s1 | gcc-*-base) dpkg-deb -x "$deb" "$r" ;;
            *) ;;  # the rest of coreutils' closure (libacl, libattr, libselinux...) env does not link
        esac
    done
    install -D -m 0755 "$work/coreutils-$arch/usr/bin/env" "$r/usr/bin/env"
    rm -rf "$r"/usr/share/{doc,man,lintian,locale,gdb,info,bug} "$r"/usr/lib/*/gconv "$r"/etc/ld.so.conf.d
    for l in bin sbin lib lib64; do [ -e "$r/usr/$l" ] && ln -sfn "usr/$l" "$r/$l"; done

    # Node: the official binary, from npm.
    local nodepkg="node-linux-$(node_arch "$arch")@$NODE_VERSION"
    (cd "$work" && npm pack --silent "$nodepkg" >/dev/null)
    mkdir -p "$work/node-$arch"
    tar -xzf "$work"/node-linux-"$(node_arch "$arch")"-"$NODE_VERSION".tgz -C "$work/node-$arch"
    install -D -m 0755 "$work/node-$arch/package/bin/node" "$r/usr/bin/node"
    printf 'node %s (npm %s)\n' "$NODE_VERSION" "$nodepkg" >>"$r/usr/share/ovn-psample/versions.txt"

    # The project, as a user installs it; only this machine's prebuild.
    mkdir -p "$r/opt/ovn-psample"
    (cd "$r/opt/ovn-psample" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --no-package-lock \
        --os=linux --cpu="$(node_arch "$arch")" "$tgz" >/dev/null)
    local app="$r/opt/ovn-psample/node_modules/ovn-psample"
    find "$app/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$(node_arch "$arch")" -exec rm -rf {} +
    rm -f "$r/opt/ovn-psample/package.json"
    mkdir -p "$r/usr/local/bin"
    ln -s ../../../opt/ovn-psample/node_modules/ovn-psample/dist/cli/main.js "$r/usr/local/bin/ovn-psample"
    (cd "$r/opt/ovn-psample" && find node_modules -name package.json -maxdepth 3 -path '*/node_modules/*/package.json' |
        sort | while read -r p; do node -e 'const p=require(process.argv[1]); console.log(p.name, p.version)' "$PWD/$p"; done) \
        >>"$r/usr/share/ovn-psample/versions.txt"
    sort -o "$r/usr/share/ovn-psample/versions.txt" "$r/usr/share/ovn-psample/versions.txt"

    mkdir -p "$r/etc" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/var/run"
    chmod 1777 "$r/tmp"
    printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
}

tags=()
for arch in "${arches[@]}"; do
    t0=$SECONDS
    r="$work/rootfs-$arch"
    mkdir -p "$r" "$work/ctx-$arch"
    rootfs_for "$arch" "$r"
    # Sorted names, one mtime, numeric owners: the layer's bytes depend on the files alone.
    tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
        -C "$r" -cf "$work/ctx-$arch/rootfs.tar" .
    cp "$HERE/Containerfile" "$work/ctx-$arch/Containerfile"
    tag="localhost/ovn-psample:$version-$arch"
    buildah build --quiet --platform "linux/$arch" --timestamp "$SOURCE_DATE_EPOCH" \
        --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg LICENSE="$license" --build-arg SOURCE="$source_url" \
        -t "$tag" "$work/ctx-$arch" >/dev/null
    size=$(podman image inspect --format '{{.Size}}' "$tag")
    echo "image: $tag built in $((SECONDS - t0)) s, $((size / 1000000)) MB uncompressed"
    tags+=("$tag")
done

manifest="localhost/ovn-psample:$version"
podman manifest rm "$manifest" >/dev/null 2>&1 || true
podman manifest create "$manifest" >/dev/null
for tag in "${tags[@]}"; do podman manifest add "$manifest" "containers-storage:$tag" >/dev/null; done
rm -f "$out"
podman manifest push --quiet --all "$manifest" "oci-archive:$out:$manifest"
echo "image: $out ($(du -m "$out" | cut -f1) MB compressed, ${#tags[@]} platform(s)) in $((SECONDS - started)) s"
echo "image: index $(tar -xOf "$out" index.json | sha256sum | cut -d' ' -f1)"

#!/bin/bash
# The Debian 11 (bullseye) sysroot a prebuild is compiled against, so it loads on glibc 2.31 and
# GCC 10's libstdc++ (README "Versions"): bullseye's libc6-dev, libstdc++-10-dev, libgcc-10-dev
# and linux-libc-dev of one machine, unpacked with dpkg-deb -x (no root, no chroot). clang
# --sysroot takes everything from it: headers, crt files, libc and libstdc++ to link against.
# The versions are pinned (bullseye's main suite is frozen at 11.11), apt checks them against
# the signed release file, and the .debs are kept, so once downloaded it builds offline.
#
# usage: sysroot.sh ARCH            print the sysroot of ARCH (x64 or arm64), made when missing
#        sysroot.sh --rootfs ARCH DIR
#                                   unpack bullseye's runtime (libc6, libstdc++6, libgcc-s1) of
#                                   ARCH into DIR: the userland test/package/cross-arch.test.ts
#                                   loads the x64 prebuild in
# OVN_PSAMPLE_SYSROOT_CACHE moves the cache (default /var/cache/ovn-psample-sysroot as root,
# ~/.cache/ovn-psample-sysroot otherwise), OVN_PSAMPLE_SYSROOT_MIRROR the Debian mirror.
set -euo pipefail

SUITE=bullseye
MIRROR=${OVN_PSAMPLE_SYSROOT_MIRROR:-http://deb.debian.org/debian}
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/ovn-psample-sysroot; else default_cache=${XDG_CACHE_HOME:-$HOME/.cache}/ovn-psample-sysroot; fi
CACHE=${OVN_PSAMPLE_SYSROOT_CACHE:-$default_cache}
# bullseye's s390x left deb.debian.org when its LTS began (Aug 2025; LTS has amd64, arm64, armhf,
# i386) and archive.debian.org is out of reach, so s390x is built against bookworm's cross
# toolchain (scripts/cross/machines.mjs).
RUNTIME=(libc6=2.31-13+deb11u11 libstdc++6=10.2.1-6 libgcc-s1=10.2.1-6)
BUILD=("${RUNTIME[@]}" libc6-dev=2.31-13+deb11u11 libstdc++-10-dev=10.2.1-6 libgcc-10-dev=10.2.1-6
       linux-libc-dev=5.10.223-1)

fail() {
    echo "sysroot.sh: $*" >&2
    exit 1
}

debian_arch() {
    case $1 in
        x64) echo amd64 ;;
        arm64) echo arm64 ;;
        *) fail "no $SUITE sysroot for $1 (one of x64, arm64)" ;;
    esac
}

# Bullseye's apt state lives in the cache, apart from the host's apt.
apt_options() {
    local apt_dir=$CACHE/apt
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
    echo "deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-bullseye-stable.gpg] $MIRROR $SUITE main" \
        >"$apt_dir/sources.list"
    : >"$apt_dir/empty-status"
    APT=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
         -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir/archives"
         -o Dir::State::status="$apt_dir/empty-status" -o Debug::NoLocking=true
         -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
         -o APT::Sandbox::User=root)
}

# The .deb files of PACKAGES (name=version) for one machine, downloaded once.
debs_of() {
    local arch=$1
    shift
    local archives=$CACHE/apt/archives wanted=() files=() spec name version file
    for spec in "$@"; do
        name=${spec%%=*}
        version=${spec#*=}
        # apt names files NAME_VERSION_ARCH.deb with the epoch's colon as %3a.
        file=$archives/${name}_${version/:/%3a}_$arch.deb
        files+=("$file")
        [ -f "$file" ] || wanted+=("$name:$arch=$version")
    done
    if [ ${#wanted[@]} -gt 0 ]; then
        apt-get "${APT[@]}" update -q --error-on=any >"$CACHE/apt-update.log" 2>&1 ||
            fail "cannot reach $MIRROR for $SUITE (log: $CACHE/apt-update.log)"
        (cd "$archives" && apt-get "${APT[@]}" download -q "${wanted[@]}") >"$CACHE/apt-download.log" 2>&1 ||
            fail "cannot download ${wanted[*]} (log: $CACHE/apt-download.log)"
    fi
    for file in "${files[@]}"; do
        [ -f "$file" ] || fail "apt did not leave $file (log: $CACHE/apt-download.log)"
    done
    printf '%s\n' "${files[@]}"
}

unpack() {
    local dir=$1 deb
    shift
    mkdir -p "$dir"
    for deb in "$@"; do
        if ! dpkg-deb -x "$deb" "$dir"; then
            rm -f "$deb"
            fail "$deb could not be unpacked and is removed from the cache: run again to download it"
        fi
    done
    # Absolute links (lib64/ld-linux-x86-64.so.2 -> /lib/...) would lead the linker out of the
    # sysroot: made relative, they point inside it.
    local link target
    while IFS= read -r -d '' link; do
        target=$(readlink "$link")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dir$target")" "$link"
    done < <(find "$dir" -type l -lname '/*' -print0)
}

main() {
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    flock 9
    apt_options
    if [ "${1:-}" = --rootfs ]; then
        [ $# = 3 ] || fail "usage: sysroot.sh --rootfs ARCH DIR"
        local arch
        arch=$(debian_arch "$2")
        # A failure inside $( ) stops the script; one inside < <( ) would not.
        debs=$(debs_of "$arch" "${RUNTIME[@]}")
        mapfile -t debs <<<"$debs"
        unpack "$3" "${debs[@]}"
        return
    fi
    [ $# = 1 ] || fail "usage: sysroot.sh ARCH | sysroot.sh --rootfs ARCH DIR"
    local arch key sysroot
    arch=$(debian_arch "$1")
    # The directory name is the cache key: the pinned packages and this script.
    key=$({ printf '%s\n' "${BUILD[@]}"; sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1; } | sha256sum | cut -c1-16)
    sysroot=$CACHE/$SUITE-$arch-$key
    if [ ! -d "$sysroot" ]; then
        debs=$(debs_of "$arch" "${BUILD[@]}")
        mapfile -t debs <<<"$debs"
        rm -rf "$sysroot.partial"
        unpack "$sysroot.partial" "${debs[@]}"
        mv "$sysroot.partial" "$sysroot"
        # Older keys are sysroots nothing builds against any more.
        find "$CACHE" -maxdepth 1 -name "$SUITE-$arch-*" ! -name "$SUITE-$arch-$key" -exec rm -rf {} +
    fi
    echo "$sysroot"
}

main "$@"

# The cached guest image; sourced by lab.sh, never run.
# lab_image_ensure sets LAB_IMAGE to a directory holding rootfs.ext4, vmlinuz,
# initrd.img and versions.txt. The directory name is the cache key: sha256 of
# the resolved versions of every guest package plus the hashes of the scripts
# that shape the image, so a new trixie point release or an edit here rebuilds
# it and nothing else does.

# Trixie's apt state lives in the cache, apart from the host's bookworm apt.
lab_trixie_apt() {
    local apt_dir="$LAB_CACHE/apt"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
    cat >"$apt_dir/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $LAB_MIRROR $LAB_SUITE main
SOURCES
    # An empty dpkg status makes apt resolve the whole closure as on a bare guest.
    : >"$apt_dir/empty-status"
    LAB_APT=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
             -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir/archives"
             -o Dir::State::status="$apt_dir/empty-status" -o Debug::NoLocking=true
             -o APT::Architecture=amd64 -o APT::Architectures::=amd64)
}

lab_resolved_versions() {
    apt-get "${LAB_APT[@]}" -s -q --no-install-recommends install "${LAB_PACKAGES[@]}" |
        awk '/^Inst /{gsub(/[()]/, "", $3); print $2, $3}' | sort
}

lab_image_key() {
    {
        printf '%s\n' "$1"
        sha256sum "$LAB_DIR/image.sh" "$LAB_DIR/config.sh" "$LAB_DIR/guest/init" | cut -d' ' -f1
    } | sha256sum | cut -c1-16
}

lab_build_rootfs() {
    local rootfs=$1
    debootstrap --variant=minbase --arch=amd64 --cache-dir="$LAB_CACHE/apt/archives" \
        "$LAB_SUITE" "$rootfs" "$LAB_MIRROR"
    # Package scripts must not start daemons inside the build chroot.
    printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
    chmod +x "$rootfs/usr/sbin/policy-rc.d"
    # Only the modules needed to mount / from virtio-blk go into the initrd,
    # which keeps it small and the boot under TCG short.
    mkdir -p "$rootfs/etc/initramfs-tools/conf.d" "$rootfs/usr/share/initramfs-tools/modules.d"
    echo 'MODULES=list' >"$rootfs/etc/initramfs-tools/conf.d/ovn-psample-lab.conf"
    printf 'virtio_pci\nvirtio_blk\next4\n' >"$rootfs/usr/share/initramfs-tools/modules.d/ovn-psample-lab"
    # Only /proc: binding /dev would let package scripts reach the host's devices.
    mount -t proc proc "$rootfs/proc"
    local rc=0
    chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${LAB_PACKAGES[@]}" || rc=$?
    chroot "$rootfs" apt-get clean || rc=$?
    umount "$rootfs/proc"
    [ "$rc" -eq 0 ] || return "$rc"
    rm -f "$rootfs/usr/sbin/policy-rc.d"
    echo lab >"$rootfs/etc/hostname"
    printf '127.0.0.1 localhost lab\n' >"$rootfs/etc/hosts"
    printf '/dev/vda / ext4 rw,noatime 0 1\n' >"$rootfs/etc/fstab"
    install -m 0755 "$LAB_DIR/guest/init" "$rootfs/sbin/ovn-psample-lab-init"
    mkdir -p "$rootfs/lab"
}

lab_build_image() {
    local dir=$1 rootfs=$1/rootfs size_mb
    cp "$rootfs"/boot/vmlinuz-* "$dir/vmlinuz"
    cp "$rootfs"/boot/initrd.img-* "$dir/initrd.img"
    chroot "$rootfs" dpkg-query -W -f '${Package} ${Version}\n' >"$dir/versions.txt"
    size_mb=$(( $(du -sm "$rootfs" | cut -f1) * 13 / 10 + 256 ))
    mkfs.ext4 -q -F -L ovnpsample-root -E root_owner=0:0 -d "$rootfs" "$dir/rootfs.ext4" "${size_mb}M"
    rm -rf --one-file-system "$rootfs"
}

lab_newest_cached_image() {
    ls -1dt "$LAB_CACHE"/image-*/ 2>/dev/null | head -n 1 | sed 's:/$::'
}

lab_image_ensure() {
    mkdir -p "$LAB_CACHE"
    exec 8>"$LAB_CACHE/.lock"
    flock 8
    lab_trixie_apt
    local versions key fallback
    if ! apt-get "${LAB_APT[@]}" update -q >"$LAB_CACHE/apt-update.log" 2>&1; then
        fallback=$(lab_newest_cached_image)
        [ -n "$fallback" ] || lab_fail "cannot reach $LAB_MIRROR to resolve the guest packages and no image is cached in $LAB_CACHE; check the network (log: $LAB_CACHE/apt-update.log)"
        lab_say "WARNING: $LAB_MIRROR unreachable; using the newest cached image $fallback"
        LAB_IMAGE=$fallback
        flock -u 8
        return
    fi
    versions=$(lab_resolved_versions)
    [ -n "$versions" ] || lab_fail "could not resolve the guest packages (${LAB_PACKAGES[*]}) from $LAB_MIRROR; see $LAB_CACHE/apt-update.log"
    key=$(lab_image_key "$versions")
    LAB_IMAGE="$LAB_CACHE/image-$key"
    if [ -f "$LAB_IMAGE/rootfs.ext4" ]; then
        lab_say "guest image: cached ($LAB_IMAGE)"
    else
        local tmp="$LAB_CACHE/building-$key"
        rm -rf --one-file-system "$tmp"
        mkdir -p "$tmp"
        lab_say "guest image: building Debian $LAB_SUITE with ${LAB_PACKAGES[*]} (about a minute)"
        lab_step "building the guest root filesystem (debootstrap + packages)" "$LAB_CACHE/build-$key.log" \
            lab_build_rootfs "$tmp/rootfs"
        lab_step "writing the guest disk image" "$LAB_CACHE/image-$key.log" lab_build_image "$tmp"
        mv "$tmp" "$LAB_IMAGE"
        # Older images only waste space once a new key exists.
        find "$LAB_CACHE" -maxdepth 1 -name 'image-*' ! -name "image-$key" -exec rm -rf --one-file-system {} +
        lab_say "guest image: $(du -sh "$LAB_IMAGE" | cut -f1) in $LAB_IMAGE"
    fi
    flock -u 8
}

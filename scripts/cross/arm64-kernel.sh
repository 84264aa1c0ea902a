#!/bin/bash
# The arm64 prebuild reading real psample samples from a real arm64 kernel: Debian trixie's
# cloud-arm64 kernel booted under qemu-system-aarch64 (TCG) from a small initramfs holding
# trixie's arm64 nodejs, iproute2 and busybox-static, the kernel's psample, act_sample,
# cls_matchall and sch_ingress modules, and an installed ovn-psample; tc samples every packet on
# lo into group 5 while `ovn-psample listen` reads them. No disk image, no network device.
# Offline: Debian's mirror only (apt with a private state). Prints the guest's listen output;
# exits 0 only when it printed samples.
#
# usage: scripts/cross/arm64-kernel.sh NODE_MODULES_DIR   (holding ovn-psample with prebuilds/linux-arm64)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${OVN_PSAMPLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${OVN_PSAMPLE_ARM64_CACHE:-/var/cache/ovn-psample-arm64}
MODULES_DIR=$(realpath "${1:?usage: $0 NODE_MODULES_DIR}")
[ -f "$MODULES_DIR/ovn-psample/prebuilds/linux-arm64/ovn-psample.node" ] || { echo "$MODULES_DIR/ovn-psample has no linux-arm64 prebuild" >&2; exit 2; }
started=$SECONDS

apt_dir="$CACHE/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" >"$apt_dir/sources.list"
: >"$apt_dir/status"
APT=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists="$apt_dir/lists"
     -o Dir::Cache::archives="$apt_dir/archives" -o Dir::State::status="$apt_dir/status" -o Debug::NoLocking=true
     -o APT::Architecture=arm64 -o APT::Architectures::=arm64)
exec 9>"$CACHE/.lock"
flock 9
apt-get "${APT[@]}" -qq update
kernel=$(apt-cache "${APT[@]}" depends linux-image-cloud-arm64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
debs=$(apt-get "${APT[@]}" -s -qq --no-install-recommends install nodejs iproute2 busybox-static "$kernel" | awk '/^Inst /{print $2}')
apt-get "${APT[@]}" -qq -y --no-install-recommends install --download-only nodejs iproute2 busybox-static "$kernel" >/dev/null
flock -u 9

w=$(mktemp -d /tmp/ovn-psample-arm64.XXXXXX)
trap 'rm -rf "$w"' EXIT
r="$w/root"
mkdir -p "$r" "$w/kernel"
for pkg in $debs; do
    deb=$(ls "$apt_dir/archives/${pkg}"_*.deb | sort -V | tail -1)
    if [ "$pkg" = "$kernel" ]; then dpkg-deb -x "$deb" "$w/kernel"; else dpkg-deb -x "$deb" "$r"; fi
done
for l in bin sbin lib; do [ -e "$r/usr/$l" ] && [ ! -e "$r/$l" ] && ln -s "usr/$l" "$r/$l"; done
mkdir -p "$r"/{proc,sys,dev,tmp,mods,busybin,opt/ovn-psample}
net=$(echo "$w"/kernel/usr/lib/modules/*/kernel/net)
for mod in psample/psample sched/act_sample sched/cls_matchall sched/sch_ingress; do
    xz -dc "$net/$mod.ko.xz" >"$r/mods/${mod#*/}.ko"
done
cp -a "$MODULES_DIR" "$r/opt/ovn-psample/node_modules"
install -m 0755 "$HERE/arm64-init.sh" "$r/init"
(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1 >"$w/initrd.gz")
echo "arm64: initramfs ready in $((SECONDS - started)) s (kernel $kernel)"

# pauth-impdef: TCG computes pointer authentication codes with a cheap hash of its own instead
# of the architected QARMA5, which the kernel and node sign every return with (53 s -> 42 s here).
timeout 540 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2048 -nographic -no-reboot -nic none \
    -kernel "$(echo "$w"/kernel/boot/vmlinuz-*)" -initrd "$w/initrd.gz" \
    -append "console=ttyAMA0 rdinit=/init panic=-1 quiet" </dev/null >"$w/console.log" 2>&1 || true
grep -E '^(ARM64|\{)' "$w/console.log" || true
echo "arm64: done in $((SECONDS - started)) s"
grep -q '"command":"sample"' "$w/console.log" || { echo "arm64: no sample was read; console:" >&2; tail -50 "$w/console.log" >&2; exit 1; }

# Lab settings shared by every scripts/lab step; sourced, never run.
# Each value can be overridden from the environment so CI and developers can
# move the cache, lengthen the timeout or try another CPU model without edits.

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_DIR="$LAB_ROOT/scripts/lab"

LAB_SUITE=trixie
LAB_MIRROR=${OVN_PSAMPLE_LAB_MIRROR:-http://deb.debian.org/debian}
# The guest needs psample/act_sample/openvswitch/vxlan modules (cloud kernel has
# them), OVS 3.5 and OVN 25.03 (trixie), and trixie's node 20.19 to run vitest. podman, runc
# (scripts/image/containers.conf's runtime), catatonit (the pause process `podman kube play` puts in
# each pod) and kustomize (the host tests' 5.6) run deploy/'s DaemonSet pod on the node.
LAB_PACKAGES=(kmod iproute2 iputils-ping procps openvswitch-switch ovn-central ovn-host nodejs
              linux-image-cloud-amd64 podman runc catatonit kustomize)

LAB_CACHE=${OVN_PSAMPLE_LAB_CACHE:-/var/cache/ovn-psample-lab}
LAB_WORK=${OVN_PSAMPLE_LAB_WORK:-$LAB_ROOT/.lab}

# /dev/kvm on the development machines is PVM and cannot run a stock kernel, so
# the guest runs under TCG; plain 'max' double-faults now and then on qemu 7.2
# (cmpxchg16b in SLUB), '-cx16' avoids it. '-erms,-fsrm': with them the guest's kernel and glibc
# copy with `rep movsb`, which TCG runs one byte per iteration (`json+ovn` paid 13 ns a byte), where a
# real CPU with ERMS moves tens of bytes per cycle: every byte a consumer writes cost as much as
# a tenth of a system call. Without them they copy 8 bytes per instruction (scripts/lab/README.md,
# findings: the C reader alike, `c-long` and `json+ovn` cheaper).
LAB_QEMU_CPU=${OVN_PSAMPLE_LAB_QEMU_CPU:-max,-cx16,-erms,-fsrm}
LAB_SMP=${OVN_PSAMPLE_LAB_SMP:-2}
LAB_MEM_MB=${OVN_PSAMPLE_LAB_MEM_MB:-3072}
LAB_TIMEOUT_S=${OVN_PSAMPLE_LAB_TIMEOUT_S:-900}

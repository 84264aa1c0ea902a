# Host tools the lab needs, installed with apt when missing; sourced, never run.

# command -> Debian package that provides it
declare -A LAB_HOST_TOOLS=(
    [qemu-system-x86_64]=qemu-system-x86
    [debootstrap]=debootstrap
    [mkfs.ext4]=e2fsprogs
    [debugfs]=e2fsprogs
    [flock]=util-linux
    [make]=make
    [g++]=g++
    [python3]=python3
    # the project's image for test/deploy/daemonset.lab.test.ts (scripts/image/build.sh)
    [podman]=podman
    [buildah]=buildah
)

lab_missing_host_packages() {
    local tool
    for tool in "${!LAB_HOST_TOOLS[@]}"; do
        command -v "$tool" >/dev/null || echo "${LAB_HOST_TOOLS[$tool]}"
    done
    [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || echo debian-archive-keyring
}

lab_install_host_deps() {
    local missing
    missing=$(lab_missing_host_packages | sort -u | tr '\n' ' ')
    command -v node >/dev/null && command -v npm >/dev/null ||
        lab_fail "node >= 20.17 and npm are needed on the host to build the project; install them first (Debian 12's own nodejs is 18)"
    [ -n "${missing// /}" ] || return 0
    command -v apt-get >/dev/null || lab_fail "missing host tools ($missing) and no apt-get to install them; install them by hand"
    lab_say "installing host packages: $missing"
    mkdir -p "$LAB_WORK"
    # shellcheck disable=SC2086
    lab_step "apt-get install $missing" "$LAB_WORK/host-deps.log" \
        env DEBIAN_FRONTEND=noninteractive bash -c "apt-get update -q && apt-get install -y -q --no-install-recommends $missing"
}

# Boots the lab guest with qemu; sourced, never run.
# The guest has no network device at all: every packet the lab samples stays
# between veths and namespaces inside it. The root image is opened with
# snapshot=on, so the cached image is never modified by a run.

lab_qemu_args() {
    local mode=$1
    LAB_QEMU=(qemu-system-x86_64 -accel tcg,thread=multi -cpu "$LAB_QEMU_CPU"
              -smp "$LAB_SMP" -m "$LAB_MEM_MB" -nic none -no-reboot
              -kernel "$LAB_IMAGE/vmlinuz" -initrd "$LAB_IMAGE/initrd.img"
              -drive "file=$LAB_IMAGE/rootfs.ext4,if=virtio,format=raw,snapshot=on"
              -drive "file=$LAB_WORK/payload.ext4,if=virtio,format=raw"
              -append "console=ttyS0 root=/dev/vda rw init=/sbin/ovn-psample-lab-init lab.mode=$mode panic=-1 quiet loglevel=3")
}

# The guest kernel now and then dies while it boots (seen once in hundreds of boots: an
# "Oops: int3" in code the kernel was patching, two vCPUs under multi-threaded TCG). It
# dies before the lab's init prints LAB-READY, so nothing of the project has run yet and
# the payload disk is untouched: such a boot is tried again, and says so. A guest that
# fails after LAB-READY is never retried; that failure is the run's result.
LAB_BOOT_ATTEMPTS=${OVN_PSAMPLE_LAB_BOOT_ATTEMPTS:-3}

# lab_boot MODE: runs the guest to completion, streaming its console; returns
# 0 when the guest powered off by itself and 124 when it was killed at the timeout.
lab_boot() {
    local mode=$1 console="$LAB_WORK/console.log" attempt=1 rc t0=$SECONDS
    lab_qemu_args "$mode"
    if [ "$mode" = shell ]; then
        "${LAB_QEMU[@]}" -nographic -serial mon:stdio
        return
    fi
    # Two TCG guests on one small machine each run at half speed and can overrun the timeout:
    # checkouts sharing a machine (and its lab cache) take turns.
    exec 7>"$LAB_CACHE/.boot-lock"
    if ! flock -n 7; then
        lab_say "another lab guest runs on this machine; waiting for it to finish"
        flock 7
    fi
    while :; do
        rc=0
        lab_boot_once "$console" || rc=$?
        grep -q '^LAB-READY' "$console" && break
        grep -qE 'Kernel panic|Oops:' "$console" || break
        [ "$attempt" -lt "$LAB_BOOT_ATTEMPTS" ] || break
        mv "$console" "$LAB_WORK/console.boot-$attempt.log"
        attempt=$((attempt + 1))
        lab_say "the guest kernel crashed while booting, before the lab started (console: $LAB_WORK/console.boot-$((attempt - 1)).log): booting again, attempt $attempt of $LAB_BOOT_ATTEMPTS"
    done
    exec 7>&-
    LAB_BOOT_SECONDS=$((SECONDS - t0))
    return "$rc"
}

# lab_boot_once CONSOLE: one boot of the guest (LAB_QEMU) writing its serial console to CONSOLE.
lab_boot_once() {
    local console=$1 qpid tpid rc=0
    : >"$console"
    lab_say "booting the guest (TCG, ${LAB_SMP} vCPUs, ${LAB_MEM_MB} MB, no network; timeout ${LAB_TIMEOUT_S} s)"
    timeout --kill-after=10 "$LAB_TIMEOUT_S" "${LAB_QEMU[@]}" -display none -monitor none \
        -serial "file:$console" </dev/null &
    qpid=$!
    # Carriage returns and cursor controls from the guest's programs only garble logs.
    tail -n +1 -f --pid="$qpid" "$console" | sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' &
    tpid=$!
    wait "$qpid" || rc=$?
    wait "$tpid" 2>/dev/null || true
    if [ "$rc" -eq 137 ] || [ "$rc" -eq 124 ]; then
        lab_say "TIMEOUT: the guest was still running after ${LAB_TIMEOUT_S} s and was killed (console: $console)"
        return 124
    fi
    [ "$rc" -eq 0 ] || lab_say "qemu exited with status $rc (console: $console)"
    return "$rc"
}

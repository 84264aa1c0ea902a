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

# lab_boot MODE: runs the guest to completion, streaming its console; returns
# 0 when the guest powered off by itself and 124 when it was killed at the timeout.
lab_boot() {
    local mode=$1 console="$LAB_WORK/console.log" qpid tpid rc=0 t0=$SECONDS
    lab_qemu_args "$mode"
    if [ "$mode" = shell ]; then
        "${LAB_QEMU[@]}" -nographic -serial mon:stdio
        return
    fi
    : >"$console"
    # Two TCG guests on one small machine each run at half speed and can overrun the timeout:
    # checkouts sharing a machine (and its lab cache) take turns.
    exec 7>"$LAB_CACHE/.boot-lock"
    if ! flock -n 7; then
        lab_say "another lab guest runs on this machine; waiting for it to finish"
        flock 7
    fi
    lab_say "booting the guest (TCG, ${LAB_SMP} vCPUs, ${LAB_MEM_MB} MB, no network; timeout ${LAB_TIMEOUT_S} s)"
    timeout --kill-after=10 "$LAB_TIMEOUT_S" "${LAB_QEMU[@]}" -display none -monitor none \
        -serial "file:$console" </dev/null &
    qpid=$!
    # Carriage returns and cursor controls from the guest's programs only garble logs.
    tail -n +1 -f --pid="$qpid" "$console" | sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' &
    tpid=$!
    wait "$qpid" || rc=$?
    wait "$tpid" 2>/dev/null || true
    LAB_BOOT_SECONDS=$((SECONDS - t0))
    if [ "$rc" -eq 137 ] || [ "$rc" -eq 124 ]; then
        lab_say "TIMEOUT: the guest was still running after ${LAB_TIMEOUT_S} s and was killed (console: $console)"
        return 124
    fi
    [ "$rc" -eq 0 ] || lab_say "qemu exited with status $rc (console: $console)"
    return "$rc"
}

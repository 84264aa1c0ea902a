#!/bin/bash
# What the guest does once booted (called by the image's init with the mode).
# Lives on the payload disk, so changing it never rebuilds the cached image.
#   test   run test/**/*.lab.test.ts with vitest; results to /lab/out
#   demo   start the ovn-kubernetes-shaped node and stream decoded samples
#   bench  the lab benchmark (scripts/bench/lab/run.mjs); report and figures to /lab/out
#   shell  interactive shell on the serial console
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mode=$1
out=/lab/out
project=/lab/project
mkdir -p "$out"
cd "$project" || exit 1

# Daemon logs explain most lab failures; keep them next to the results.
keep_logs() {
    mkdir -p "$out/logs"
    cp -r /var/log/openvswitch /var/log/ovn "$out/logs/" 2>/dev/null
    dmesg >"$out/logs/dmesg.txt"
}

case $mode in
    test)
        export OVN_PSAMPLE_LAB_OUT=$out
        # The serial console looks like a terminal: without CI, vitest redraws
        # its status every second and the host log fills with escape codes.
        export CI=true NO_COLOR=1
        # podman: the project's settings, then the guest's (no systemd, no journald); the image to load.
        export CONTAINERS_CONF_OVERRIDE=$project/scripts/lab/guest/containers.conf
        export OVN_PSAMPLE_LAB_IMAGE=/lab/image/ovn-psample-amd64.oci.tar
        t0=$(cut -d' ' -f1 /proc/uptime)
        # trixie has no npm in the image; vitest's own entry point is what npx would run.
        mapfile -t filters < <(grep -v '^$' /lab/vitest-filters)
        node node_modules/vitest/vitest.mjs run --config test/config/lab.config.mts "${filters[@]}"
        rc=$?
        echo "$rc" >"$out/vitest-exit-code"
        echo "LAB-TESTS exit=$rc seconds=$(awk -v t0="$t0" '{printf "%.1f", $1 - t0}' /proc/uptime)"
        keep_logs
        exit "$rc"
        ;;
    demo)
        bash "$project/scripts/lab/guest/demo.sh"
        rc=$?
        echo "$rc" >"$out/demo-exit-code"
        keep_logs
        exit "$rc"
        ;;
    bench)
        mapfile -t args < <(grep -v '^$' /lab/bench-args)
        node "$project/scripts/bench/lab/run.mjs" --tools /lab/tools --out "$out" "${args[@]}"
        rc=$?
        echo "$rc" >"$out/bench-exit-code"
        keep_logs
        exit "$rc"
        ;;
    shell)
        echo "lab shell: the project is in $project; test helpers in $project/test/support/lab; 'exit' powers off"
        setsid -c bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
        ;;
    *)
        echo "unknown lab mode '$mode'"
        exit 2
        ;;
esac

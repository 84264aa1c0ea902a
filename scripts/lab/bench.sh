# `lab.sh bench` (npm run bench:lab): the host half of the lab benchmark; sourced, never run.
# The guest runs scripts/bench/lab/run.mjs (guest/run.sh bench) with LAB_BENCH_ARGS. The static
# C tools it needs are built here, since the guest has no compiler, and reach it on the payload
# disk as /lab/tools; with --perf, so does this host's perf (/lab/tools/perf). The guest's report
# is printed last, so its RESULT line ends the output.

# The default matrix runs 10-15 minutes under TCG today (most runs wait for ovn-psample to drain
# its backlog), far longer than the tests' timeout.
LAB_BENCH_TIMEOUT_S=1800

# USER_HZ ticks: busy CPU time of the whole host, its hypervisor's steal, and the CPU time of this
# shell's waited-for children (qemu, once the guest is down).
lab_host_cpu_ticks() {
    local cpu user nice system idle iowait irq softirq steal rest self
    read -r cpu user nice system idle iowait irq softirq steal rest </proc/stat
    self=$(</proc/$$/stat)
    read -r -a self <<<"${self##*) }"
    echo "$((user + nice + system + irq + softirq)) $steal $((self[13] + self[14]))"
}

lab_bench_prepare() {
    LAB_TIMEOUT_S=${OVN_PSAMPLE_LAB_TIMEOUT_S:-$LAB_BENCH_TIMEOUT_S}
    lab_step "building the benchmark's static C tools" "$LAB_WORK/bench-tools.log" \
        bash "$LAB_ROOT/scripts/bench/lab/build-tools.sh" "$LAB_WORK/bench-tools"
    # A perf shipped for an earlier run would only weigh down this one's payload.
    rm -rf "$LAB_WORK/bench-tools/perf"
    if $LAB_BENCH_PERF; then
        lab_step "shipping this host's perf and its libraries" "$LAB_WORK/bench-perf.log" \
            bash "$LAB_ROOT/scripts/bench/lab/ship-perf.sh" "$LAB_WORK/bench-tools/perf"
        LAB_PAYLOAD_SYMBOLS=true
    fi
    LAB_PAYLOAD_TOOLS=$LAB_WORK/bench-tools
    LAB_BENCH_HOST_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
    LAB_BENCH_HOST_CPU=$(lab_host_cpu_ticks)
    LAB_BENCH_STARTED=$SECONDS
}

# TCG guests run at the speed the host leaves them: what else ran on the host shows in the figures.
lab_bench_host_share() {
    local busy0 steal0 qemu0 busy1 steal1 qemu1 capacity
    read -r busy0 steal0 qemu0 <<<"$LAB_BENCH_HOST_CPU"
    read -r busy1 steal1 qemu1 <<<"$(lab_host_cpu_ticks)"
    capacity=$(( (SECONDS - LAB_BENCH_STARTED) * $(getconf CLK_TCK) * $(nproc) ))
    [ "$capacity" -gt 0 ] || capacity=1
    echo "host CPU while the guest ran ($(nproc) CPUs, $((SECONDS - LAB_BENCH_STARTED)) s): the guest (qemu)" \
        "$(( 100 * (qemu1 - qemu0) / capacity ))%, everything else $(( 100 * (busy1 - busy0 - qemu1 + qemu0) / capacity ))%," \
        "hypervisor steal $(( 100 * (steal1 - steal0) / capacity ))%; load average $LAB_BENCH_HOST_LOAD before, $(cut -d' ' -f1-3 /proc/loadavg) after"
}

lab_bench_report() {
    local report="$LAB_WORK/out/bench-report.txt"
    [ -f "$report" ] || lab_fail "the benchmark wrote no report (console: $LAB_WORK/console.log)"
    lab_say "$(lab_bench_host_share)"
    lab_say "all figures: $LAB_WORK/out/bench.json"
    ! $LAB_BENCH_PERF || lab_say "perf profiles of each measured burst: $LAB_WORK/out/profiles/SCENARIO-RATE-CONSUMER-roundN.txt"
    cat "$report"
    [ "$(cat "$LAB_WORK/out/bench-exit-code" 2>/dev/null)" = 0 ]
}

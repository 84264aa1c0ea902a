# `lab.sh bench` (npm run bench:lab): the host half of the lab benchmark; sourced, never run.
# The guest runs scripts/bench/lab/run.mjs (guest/run.sh bench) with LAB_BENCH_ARGS. The static
# C tools it needs are built here, since the guest has no compiler, and reach it on the payload
# disk as /lab/tools. The guest's report is printed last, so its RESULT line ends the output.

# The default matrix runs 10-15 minutes under TCG today (most runs wait for ovn-psample to drain
# its backlog), far longer than the tests' timeout.
LAB_BENCH_TIMEOUT_S=1800

lab_bench_prepare() {
    LAB_TIMEOUT_S=${OVN_PSAMPLE_LAB_TIMEOUT_S:-$LAB_BENCH_TIMEOUT_S}
    lab_step "building the benchmark's static C tools" "$LAB_WORK/bench-tools.log" \
        bash "$LAB_ROOT/scripts/bench/lab/build-tools.sh" "$LAB_WORK/bench-tools"
    LAB_PAYLOAD_TOOLS=$LAB_WORK/bench-tools
    LAB_BENCH_HOST_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
}

lab_bench_report() {
    local report="$LAB_WORK/out/bench-report.txt"
    [ -f "$report" ] || lab_fail "the benchmark wrote no report (console: $LAB_WORK/console.log)"
    # TCG guests run at the speed the host leaves them: other work on the host shows in the figures.
    lab_say "host load average (1/5/15 min): $LAB_BENCH_HOST_LOAD before the guest, $(cut -d' ' -f1-3 /proc/loadavg) after it (the guest's own vCPUs included)"
    lab_say "all figures: $LAB_WORK/out/bench.json"
    cat "$report"
    [ "$(cat "$LAB_WORK/out/bench-exit-code" 2>/dev/null)" = 0 ]
}

# Console output of the lab steps; sourced, never run.
# Long steps (debootstrap, package installs, qemu) write their chatter to a log
# file; the operator only sees one line per step with a live elapsed-time
# counter, and the log's tail when the step fails.

lab_say() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

lab_fail() { lab_say "ERROR: $*"; exit 1; }

# lab_step LABEL LOGFILE COMMAND... : run COMMAND with output to LOGFILE while
# showing LABEL and the seconds elapsed (redrawn on a terminal, every 15 s in CI logs).
lab_step() {
    local label=$1 log=$2; shift 2
    local t0=$SECONDS pid rc tick=0
    "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if [ -t 2 ]; then
            printf '\r[lab] %s ... %d s ' "$label" $((SECONDS - t0)) >&2
        elif [ $((tick % 15)) -eq 0 ]; then
            lab_say "$label ... $((SECONDS - t0)) s"
        fi
        sleep 1
        tick=$((tick + 1))
    done
    wait "$pid" && rc=0 || rc=$?
    [ -t 2 ] && printf '\r\033[K' >&2
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$log" >&2
        lab_fail "$label failed (exit $rc); full log: $log"
    fi
    lab_say "$label: done in $((SECONDS - t0)) s"
}

#!/bin/bash
# The real-kernel lab: the project's tests against a real Linux 6.12 psample,
# Open vSwitch 3.5 and OVN 25.03, inside a qemu guest (this host's kernel has
# no psample). See scripts/lab/README.md.
#
# usage: lab.sh test [--auto] [--no-build] [FILTER...]
#                                            run test/**/*.lab.test.ts in the guest (FILTER: vitest file filters)
#        lab.sh demo [--no-build]            stream live decoded samples from an ovn-kubernetes-shaped node
#        lab.sh shell [--no-build]           interactive guest shell (the project is at /lab/project)
#        lab.sh bench [--no-build] [--before=DIR] [--perf] [ARGS...]
#                                            the lab benchmark (ARGS: scripts/bench/lab/run.mjs options);
#                                            --before=DIR: another built checkout, whose consumers are NAME@before;
#                                            --perf: this host's perf profiles each measured burst in the guest
#        lab.sh image                        build or refresh the cached guest image only
#   --auto      skip, with the reason, instead of failing when not root or qemu is missing
#   --no-build  use the project as already built (dist/, build/Release) instead of rebuilding it
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/config.sh"
. "$HERE/progress.sh"
. "$HERE/host-deps.sh"
. "$HERE/image.sh"
. "$HERE/project-build.sh"
. "$HERE/payload.sh"
. "$HERE/project-image.sh"
. "$HERE/boot.sh"
. "$HERE/bench.sh"

usage() { sed -n '6,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

mode=${1:-}
shift || true
auto=false build=true
LAB_VITEST_FILTERS=()
LAB_BENCH_ARGS=()
LAB_BENCH_BEFORE=
LAB_BENCH_PERF=false
for arg in "$@"; do
    case $arg in
        --auto) auto=true ;;
        --no-build) build=false ;;
        *) case $mode in
               test) [[ $arg != -* ]] || usage; LAB_VITEST_FILTERS+=("$arg") ;;
               bench) case $arg in
                          --before=*) LAB_BENCH_BEFORE=${arg#--before=}; LAB_BENCH_ARGS+=(--before /lab/before) ;;
                          --perf) LAB_BENCH_PERF=true; LAB_BENCH_ARGS+=(--perf) ;;
                          *) LAB_BENCH_ARGS+=("$arg") ;;
                      esac ;;
               *) usage ;;
           esac ;;
    esac
done
case $mode in test | demo | shell | image | bench) ;; *) usage ;; esac
for item in package.json dist/cli/main.js prebuilds; do
    [ -z "$LAB_BENCH_BEFORE" ] || [ -e "$LAB_BENCH_BEFORE/$item" ] ||
        { echo "lab.sh: --before=$LAB_BENCH_BEFORE has no $item: build that checkout first (npm run build)" >&2; exit 2; }
done

if $auto; then
    if [ "$(id -u)" -ne 0 ]; then
        lab_say "lab tests SKIPPED: they need root (debootstrap and chroot build the guest image); run 'sudo npm run test:lab'"
        exit 0
    fi
    if ! command -v qemu-system-x86_64 >/dev/null; then
        lab_say "lab tests SKIPPED: qemu-system-x86_64 is not installed; 'npm run test:lab' installs it and runs them"
        exit 0
    fi
fi
[ "$(id -u)" -eq 0 ] || lab_fail "the lab needs root (debootstrap and chroot build the guest image); run it with sudo"

t_start=$SECONDS
mkdir -p "$LAB_WORK"
lab_install_host_deps
t0=$SECONDS; lab_image_ensure; t_image=$((SECONDS - t0))
[ "$mode" = image ] && exit 0
t0=$SECONDS
if $build; then lab_build_project; fi
if [ "$mode" = bench ]; then lab_bench_prepare; fi
if [ "$mode" = test ] && lab_wants_project_image; then
    lab_step "the project's amd64 image for the guest's podman" "$LAB_WORK/project-image.log" lab_project_image
    LAB_PAYLOAD_IMAGE=$LAB_PROJECT_IMAGE
fi
t_build=$((SECONDS - t0))
t0=$SECONDS
lab_step "packing the payload disk (project + node_modules)" "$LAB_WORK/payload.log" lab_build_payload
t_payload=$((SECONDS - t0))

boot_rc=0
lab_boot "$mode" || boot_rc=$?
[ "$mode" = shell ] && exit "$boot_rc"
lab_read_payload_out || lab_say "the guest wrote no results to its payload disk"
lab_say "timings: image ${t_image} s, host build ${t_build} s, payload ${t_payload} s, guest ${LAB_BOOT_SECONDS} s, total $((SECONDS - t_start)) s"
[ "$boot_rc" -eq 0 ] || exit 1

if [ "$mode" = test ]; then
    node "$HERE/report.mjs" "$LAB_WORK/out/results.json" "$LAB_WORK/out/vitest-exit-code"
elif [ "$mode" = bench ]; then
    lab_bench_report
else
    [ "$(cat "$LAB_WORK/out/demo-exit-code" 2>/dev/null)" = 0 ] || lab_fail "the demo did not finish cleanly (console: $LAB_WORK/console.log)"
fi

# The payload disk: the built project in, the results out; sourced, never run.
# The guest mounts it at /lab; the project sits at /lab/project exactly as on
# the host, so the lab tests import ../../src like every other test, and the
# guest writes its results to /lab/out, which the host reads back with debugfs
# (no mount needed on the host).

LAB_PAYLOAD_ITEMS=(package.json tsconfig.json src test scripts/lab scripts/bench/lab scripts/image/containers.conf deploy
                   node_modules dist prebuilds)

lab_build_payload() {
    local stage="$LAB_WORK/payload" item size_mb
    rm -rf "$stage" "$LAB_WORK/payload.ext4"
    mkdir -p "$stage/project/build/Release" "$stage/out"
    for item in "${LAB_PAYLOAD_ITEMS[@]}"; do
        [ -e "$LAB_ROOT/$item" ] || continue
        mkdir -p "$stage/project/$(dirname "$item")"
        # Hard links make the copy instant when the work dir shares the file system. -H: a git
        # worktree's node_modules may be a link to another checkout's, which the guest cannot see.
        cp -alH "$LAB_ROOT/$item" "$stage/project/$item" 2>/dev/null ||
            cp -aH "$LAB_ROOT/$item" "$stage/project/$item"
    done
    cp -a "$LAB_ROOT"/build/Release/*.node "$stage/project/build/Release/" 2>/dev/null || true
    ! ${LAB_PAYLOAD_SYMBOLS:-false} || lab_payload_unstripped_addon "$LAB_ROOT" "$stage/project"
    printf '%s\n' "${LAB_VITEST_FILTERS[@]}" >"$stage/vitest-filters"
    # Test mode: the project's image (project-image.sh), as /lab/image/ovn-psample-amd64.oci.tar.
    if [ -n "${LAB_PAYLOAD_IMAGE:-}" ]; then
        mkdir -p "$stage/image"
        cp -al "$LAB_PAYLOAD_IMAGE" "$stage/image/" 2>/dev/null || cp -a "$LAB_PAYLOAD_IMAGE" "$stage/image/"
    fi
    # Bench mode: its static C tools (built for this run only) and its arguments.
    [ -z "${LAB_PAYLOAD_TOOLS:-}" ] || cp -a "$LAB_PAYLOAD_TOOLS" "$stage/tools"
    printf '%s\n' "${LAB_BENCH_ARGS[@]}" >"$stage/bench-args"
    if [ -n "${LAB_BENCH_BEFORE:-}" ]; then
        # Another build to measure beside this one: its CLI, addon and package.json; the
        # dependencies are this project's.
        mkdir -p "$stage/before"
        for item in package.json dist prebuilds; do
            cp -a "$LAB_BENCH_BEFORE/$item" "$stage/before/$item"
        done
        ln -s ../project/node_modules "$stage/before/node_modules"
        ! ${LAB_PAYLOAD_SYMBOLS:-false} || lab_payload_unstripped_addon "$LAB_BENCH_BEFORE" "$stage/before"
    fi
    size_mb=$(( $(du -sm "$stage" | cut -f1) * 3 / 2 + 128 ))
    mkfs.ext4 -q -F -L ovnpsample-pay -E root_owner=0:0 -d "$stage" "$LAB_WORK/payload.ext4" "${size_mb}M"
    rm -rf "$stage"
}

# lab_payload_unstripped_addon CHECKOUT STAGED: the staged prebuild becomes the checkout's addon
# with its symbols, so perf names the addon's functions. prebuildify --strip strips the link output
# in place (the prebuild is the same file), so it is linked again from the build's objects. Only a
# link with the prebuild's build ID is used: sources edited since the prebuild (--no-build) would
# otherwise be compiled into it and profiled in its place. Replaced, never written through: the
# staged copy may be a hard link to the checkout's own.
lab_payload_unstripped_addon() {
    local build="$1/build" staged="$2/prebuilds/linux-x64/ovn-psample.node"
    local linked="$build/Release/obj.target/ovn_psample.node"
    if [ -f "$build/Makefile" ] && [ -f "$staged" ] && rm -f "$linked" "$build/Release/ovn_psample.node" &&
        make -s -C "$build" BUILDTYPE=Release && [ -f "$linked" ] &&
        [ "$(lab_build_id "$linked")" = "$(lab_build_id "$staged")" ]; then
        cp --remove-destination "$linked" "$staged"
    else
        lab_say "could not link $1's addon again, as built, with its symbols: its profiles show the addon's functions as addresses"
    fi
}

lab_build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }'; }

# Copies the guest's /out back to $LAB_WORK/out.
lab_read_payload_out() {
    rm -rf "$LAB_WORK/out"
    mkdir -p "$LAB_WORK"
    debugfs -R "rdump /out $LAB_WORK" "$LAB_WORK/payload.ext4" >/dev/null 2>&1
    [ -d "$LAB_WORK/out" ]
}

# The project's amd64 OCI image for the guest's podman (test/deploy/daemonset.lab.test.ts runs it
# as deploy/'s DaemonSet pod); sourced by lab.sh, never run. The image `npm run image` built from
# this checkout when podman holds it (npm test builds it before the lab runs), else built now for
# amd64 alone; saved as an OCI archive of that one image (layers uncompressed: nothing to inflate
# in the guest under TCG) at $LAB_PROJECT_IMAGE, which the payload carries to /lab/image.

LAB_PROJECT_IMAGE="$LAB_WORK/ovn-psample-amd64.oci.tar"

lab_project_image() {
    local build="$LAB_ROOT/scripts/image/build.sh" version tag wanted built
    export CONTAINERS_CONF="$LAB_ROOT/scripts/image/containers.conf"
    version=$(node -p "require('$LAB_ROOT/package.json').version")
    tag="localhost/ovn-psample:$version-amd64"
    wanted=$(bash "$build" --revision)
    built=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.revision"}}' "$tag" 2>/dev/null || true)
    if [ "$built" != "$wanted" ]; then
        bash "$build" --arch amd64 --out "$LAB_WORK/ovn-psample-build.oci.tar"
        rm -f "$LAB_WORK/ovn-psample-build.oci.tar"
    fi
    rm -f "$LAB_PROJECT_IMAGE"
    podman save --quiet --format oci-archive -o "$LAB_PROJECT_IMAGE" "$tag"
}

# Whether this run includes the test that needs the image: vitest's filters match file paths by
# substring, and no filter runs every file.
lab_wants_project_image() {
    local filter
    [ ${#LAB_VITEST_FILTERS[@]} -eq 0 ] && return 0
    for filter in "${LAB_VITEST_FILTERS[@]}"; do
        [[ test/deploy/daemonset.lab.test.ts == *"$filter"* ]] && return 0
    done
    return 1
}

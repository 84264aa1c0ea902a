# Builds the project on the host for the guest; sourced, never run.
# The guest has no network, so the addon, the compiled JavaScript and every
# node module (vitest included) are built or installed here, then copied in.

lab_build_project() {
    cd "$LAB_ROOT" || return 1
    if [ ! -x node_modules/.bin/vitest ]; then
        lab_step "npm ci (project dependencies, vitest included)" "$LAB_WORK/npm-ci.log" \
            npm ci --ignore-scripts --no-audit --no-fund
    fi
    # Debian's libnode-dev ships the headers: node-gyp then builds offline.
    if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_api.h ]; then
        export npm_config_nodedir=/usr
    fi
    lab_step "building the project (native addon + TypeScript)" "$LAB_WORK/build.log" npm run build
}

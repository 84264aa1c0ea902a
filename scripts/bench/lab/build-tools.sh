#!/bin/bash
# Builds the lab benchmark's C tools for the guest: static, so the host's compiler and glibc
# (Debian 12) serve the trixie guest, which has no compiler.
#   build-tools.sh OUTDIR
set -euo pipefail
out=${1:?usage: build-tools.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
command -v gcc >/dev/null || { echo "build-tools.sh: gcc is missing: apt-get install gcc libc6-dev" >&2; exit 1; }
mkdir -p "$out"
for tool in psample-print udp-flood; do
    gcc -static -O2 -Wall -Wextra -Werror -o "$out/$tool" "$here/$tool.c"
done

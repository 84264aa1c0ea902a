#!/bin/bash
# Puts this host's perf on the lab benchmark's payload (bench:lab --perf): the guest image has no
# perf, and installing one would change the image everyone shares. Beside it go the shared
# libraries it links, but glibc's own: the guest's glibc is newer and runs bookworm's binaries,
# while the rest (libdw, libunwind, libpython, ...) the guest lacks or has in other versions. The
# guest runs it with LD_LIBRARY_PATH=OUTDIR/lib.
#   ship-perf.sh OUTDIR
set -euo pipefail
out=${1:?usage: ship-perf.sh OUTDIR}
perf=$(command -v perf) ||
    { echo "ship-perf.sh: perf is missing on this host, and --perf ships the host's: apt-get install linux-perf" >&2; exit 1; }
# Older Debian releases install /usr/bin/perf as a script choosing perf_VERSION for the running kernel.
[ "$(head -c 4 "$perf" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    { echo "ship-perf.sh: $perf is not an ELF executable (a wrapper script?): install Debian 12's linux-perf, whose /usr/bin/perf is the program itself" >&2; exit 1; }
ldd "$perf" | grep -q 'not found' &&
    { echo "ship-perf.sh: $perf lacks libraries on this host ('ldd $perf'): reinstall linux-perf" >&2; exit 1; }
mkdir -p "$out/lib"
cp -L "$perf" "$out/perf"
# glibc's family: the C library, its split-off parts and the dynamic loader.
glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libmvec|ld-linux-x86-64)\.so'
ldd "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    [[ $(basename "$lib") =~ $glibc ]] || cp -L "$lib" "$out/lib/"
done
"$perf" --version >"$out/version"

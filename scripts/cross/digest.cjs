// The same work on every machine, summed up in digests to compare across them: N seeded random
// samples encoded with encodePsample (netlink is in the host's byte order) and decoded by the
// addon, and, on little-endian machines, the real kernel captures in test/fixtures/psample (an
// x86 kernel wrote them; a big-endian kernel would write its own order); every packet decoded
// (decodePacket) and described (describePacket), every 8-byte cookie split (decodeOvsCookie,
// splitOvnObsDomain). CommonJS with no dependency but the package, so it runs under qemu-user.
//
// usage: node digest.cjs PACKAGE_DIR CAPTURES_DIR [N]
//   prints "ARCH ENDIANNESS node VERSION: D decoded, samples SHA, captures SHA|big-endian"
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const [packageDir, capturesDir, count = '2000'] = process.argv.slice(2);
const pkg = require(packageDir);
const samplesHash = crypto.createHash('sha256');
const capturesHash = crypto.createHash('sha256');
let hash = capturesHash;
const plain = (_key, value) =>
  typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value;
let decoded = 0;

function digestMessage(message) {
  for (const sample of pkg.decodePsample(message)) {
    hash.update(JSON.stringify(sample, plain) + '\n');
    decoded++;
    if (sample.data !== undefined) {
      hash.update(JSON.stringify(pkg.decodePacket(sample.data, sample.proto ?? 0)) + '\n');
      hash.update(pkg.describePacket(sample.data, sample.proto ?? 0) + '\n');
    }
    if (sample.userCookie?.length === 8) {
      const ids = pkg.decodeOvsCookie(sample.userCookie);
      hash.update(JSON.stringify([ids, pkg.splitOvnObsDomain(ids.obsDomainId)]) + '\n');
    }
  }
}

// Real captures: little-endian netlink as an x86 kernel wrote it; a big-endian host re-encodes what a little-endian one decodes.
for (const name of fs
  .readdirSync(capturesDir)
  .filter((file) => file.endsWith('.hex'))
  .sort()) {
  const bytes = Buffer.from(fs.readFileSync(path.join(capturesDir, name), 'utf8').trim(), 'hex');
  const json = JSON.parse(fs.readFileSync(path.join(capturesDir, name.replace(/\.hex$/, '.json')), 'utf8'));
  hash.update(`${name} ${JSON.stringify(json)}\n`);
  if (os.endianness() === 'LE') digestMessage(bytes);
}
hash = samplesHash;

// Seeded random samples (xorshift32), a plausible frame each, some cut short.
let state = 0x12345678;
const random = (n) => {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state % n;
};
const bytes = (n) => Uint8Array.from({ length: n }, () => random(256));
const FRAME = Buffer.from('0a580a8000050a580a80000608004500003412344000400600000a8000050a8000069c4001bb0000000100000000a0021000', 'hex');
for (let i = 0; i < Number(count); i++) {
  const whole = Buffer.concat([FRAME, Buffer.from(bytes(random(64)))]);
  const data = new Uint8Array(whole.subarray(0, random(4) === 0 ? random(whole.length) : whole.length));
  const message = {
    group: random(65536),
    groupSeq: random(2 ** 31),
    iifindex: random(5000),
    origSize: random(9000),
    rate: random(2 ** 31) + 1,
    timestampNs: BigInt(random(2 ** 31)) * 1000000007n,
    proto: random(2) ? 0x0800 : 0x86dd,
    data,
  };
  if (random(2)) message.oifindex = random(5000);
  if (random(2)) message.userCookie = bytes(random(3) ? 8 : random(16));
  if (random(4) === 0) message.latencyNs = BigInt(random(2 ** 30));
  if (random(4) === 0) message.probability = true;
  digestMessage(pkg.encodePsample(message));
}
const captures = os.endianness() === 'LE' ? capturesHash.digest('hex').slice(0, 32) : 'big-endian';
console.log(
  `${process.arch} ${os.endianness()} node ${process.version}: ${decoded} decoded, samples ${samplesHash.digest('hex').slice(0, 32)}, captures ${captures}`,
);

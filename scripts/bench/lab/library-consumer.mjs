// The least a service using ovn-psample as a library does: open the socket, count the samples of
// each batch, write one line per batch saying how many. What it costs is the hand-off's own cost
// (reader thread, thread-safe call, batch, event loop), which every other consumer pays on top of
// its formatting.
//
//   node library-consumer.mjs PROJECT GROUP
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const [project, group] = process.argv.slice(2);
const { openPsample } = createRequire(import.meta.url)(`${project}/dist/index.js`);
const socket = openPsample({ groups: [Number(group)] });
process.once('SIGTERM', () => socket.close());
socket.on('batch', (batch) => {
  let samples = 0;
  for (const sample of batch) if (sample.command === 'sample') samples++;
  if (samples > 0) writeSync(1, `batch ${samples}\n`);
});
process.stderr.write('library-consumer: listening\n');

// The demo's live view: every psample sample of the OVN collector's group,
// decoded with the project's compiled library and resolved through the node's
// OVN databases to the ACL and Kubernetes policy that decided. One line per
// sample; loss and decoder outcomes are summed up on SIGTERM.
//   node demo-stream.js GROUP NB_REMOTE SB_REMOTE READY_FILE
'use strict';
const { writeFileSync } = require('node:fs');
const { openPsample, decodePacket, describePacket, OvnSampleDecoder } = require('../../../dist/index.js');

const VERDICT_WIDTH = 9;

function verdictOf(event) {
  if (event.status !== 'decoded') return event.status.toUpperCase();
  if (event.action === 'drop' || event.action === 'reject') return 'DROPPED';
  if (event.action === 'pass') return 'PASSED';
  return 'ALLOWED';
}

async function main() {
  const [group, northbound, southbound, readyFile] = process.argv.slice(2);
  if (!group || !northbound || !southbound || !readyFile) {
    throw new Error('usage: node demo-stream.js GROUP NB_REMOTE SB_REMOTE READY_FILE');
  }
  const decoder = new OvnSampleDecoder({ nb: northbound, sb: southbound });
  await decoder.start();
  const socket = openPsample({ groups: [Number(group)] });
  socket.on('sample', (sample) => {
    const event = decoder.decodeSample(sample);
    const packet = describePacket(decodePacket(sample.data, sample.proto));
    const app = event.app ?? `app ${event.appId}`;
    console.log(`${verdictOf(event).padEnd(VERDICT_WIDTH)} ${packet}\n          ${app}: ${event.message}`);
  });
  socket.on('drop', (drop) => console.log(`          (${drop.count} samples lost: ${drop.kind} drops)`));
  writeFileSync(readyFile, 'ready\n');
  process.once('SIGTERM', async () => {
    const stats = socket.stats();
    socket.close();
    const outcomes = decoder.stats();
    await decoder.close();
    console.log(
      `${stats.received} samples received, ${stats.kernelDrops + stats.queueDrops} lost, ` +
        `${stats.malformed} malformed; ${outcomes.decoded} decoded to an ACL`,
    );
  });
}

main().catch((error) => {
  console.error(`demo-stream: ${error.message}`);
  process.exitCode = 1;
});

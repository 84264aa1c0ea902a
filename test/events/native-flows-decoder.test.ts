import { afterAll, beforeAll, expect, it } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import { NativeFlows, type NativeFlow } from '../../src/events/native-flows';
import { encodePsample } from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { tcpSyn } from '../cli/support/frames';
import { eventually, startOvnDatabases, type OvnDatabases } from '../ovn/support/ovn-databases';
import {
  networkPolicyAcl,
  networkPolicyPortGroupIds,
  networkPolicyPortGroupName,
  NorthboundTransaction,
  sampleMetadataOf,
} from '../ovn/support/ovnk-fixtures';

// A native flow's chain is made once per interval, and again when the decoder's answers change
// (NativeFlows listens to its 'change'): against real OVN 25.03 northbound ovsdb-server, the ACL a
// flow's cookie names is added while the flow lives, and the same flow's next drain says so.

const APPS = { drop: 44, 'acl-new': 42, 'acl-est': 43 } as const;
const NODE_KEY = 1;
const T0 = 1_750_000_000_000_000_000n;
const acl = networkPolicyAcl({ namespace: 'shop', policy: 'allow-web', direction: 'Ingress', peerMatch: 'ip4.src == 10.0.0.1' });

let dbs: OvnDatabases;
let decoder: OvnSampleDecoder;

beforeAll(async () => {
  dbs = await startOvnDatabases();
  const nb = new NorthboundTransaction();
  nb.samplingApps(APPS);
  nb.collector({ setId: 42 });
  await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
  decoder = new OvnSampleDecoder({ nb: dbs.nb.unixRemote });
  await decoder.start();
});

afterAll(async () => {
  await decoder?.close();
  await dbs?.stop();
});

function cookie(): Uint8Array {
  const bytes = new Uint8Array(8);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, ((APPS['acl-new'] << 24) | NODE_KEY) >>> 0);
  view.setUint32(4, sampleMetadataOf(acl));
  return bytes;
}

/** One packet of the flow 10.0.0.1:port → 10.0.0.2:80, sampled by the ACL's cookie. */
function packet(srcPort: number, atMs: number): PsampleBatch {
  const message = encodePsample({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort, dstPort: 80 }),
    userCookie: cookie(),
    timestampNs: T0 + BigInt(atMs) * 1_000_000n,
    rate: 1,
  });
  const [buffer, count] = addon.decode(message, 0, statValues());
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
}

it("a flow's chain is made again after the decoder's answers changed, within the interval", async () => {
  const flows = new NativeFlows({
    assembler: new NetworkEventAssembler({ decoder, groupWindowMs: 0 }),
    decoder,
    groupWindowMs: 0,
    maxFlows: 100,
    bySourcePort: false,
    due: () => {},
  });
  const drained: { flow: NativeFlow; text: string; verdict: string; samples: number }[] = [];
  const drain = (): void => {
    flows.drain(false, false, (flow, counts) =>
      drained.push({ flow, text: flow.chain[0]!.text, verdict: flow.verdict, samples: counts.samples }),
    );
  };
  try {
    flows.add(packet(40_000, 0));
    drain();
    expect(drained).toHaveLength(1);
    expect(drained[0]!.verdict).toBe('unknown');

    const nb = new NorthboundTransaction();
    // In its policy's port group, as ovn-kubernetes puts it (an ACL nothing refers to is not kept).
    nb.portGroup({
      name: networkPolicyPortGroupName('shop', 'allow-web'),
      externalIds: networkPolicyPortGroupIds('shop', 'allow-web'),
      acls: [nb.acl(acl, { collector: { uuid: await collectorUuid() } })],
    });
    await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
    const sample = { obsDomainId: ((APPS['acl-new'] << 24) | NODE_KEY) >>> 0, obsPointId: sampleMetadataOf(acl) };
    await eventually(() => expect(decoder.decode(sample.obsDomainId, sample.obsPointId).status).toBe('decoded'), 'the ACL');

    flows.add(packet(40_001, 10));
    drain();
    expect(drained).toHaveLength(2);
    // The same flow (its key was announced once), its chain made again from the new answer.
    expect(drained[1]!.flow).toBe(drained[0]!.flow);
    expect(drained[1]!.verdict).toBe('allow');
    expect(drained[1]!.text).toBe('Allowed by network policy allow-web in namespace shop');
    expect(drained[1]!.samples).toBe(1);
  } finally {
    flows.close();
  }
});

async function collectorUuid(): Promise<string> {
  const [result] = (await dbs.nbWriter.transact('OVN_Northbound', [
    { op: 'select', table: 'Sample_Collector', where: [], columns: ['_uuid'] },
  ])) as [{ rows: { _uuid: [string, string] }[] }];
  return result.rows[0]!._uuid[1];
}

// Names from the OVN databases reach the text outputs; whoever writes those databases chooses them.
import { expect, it } from 'vitest';

import type { NetworkEvent } from '../../src/events/network-event';
import { escapeControl } from '../../src/output/control-text';
import { HumanFormatter } from '../../src/output/event-human';
import { ObservFormatter } from '../../src/output/event-observ';
import { topLines } from '../../src/output/top-view';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { decodePacket, encodePsample } from '../../src/index';
import { packetFields } from '../../src/packet/fields';
import { decodePsampleSamples } from '../../src/psample/decode';
import { icmpEcho } from '../cli/support/frames';

const HOSTILE = 'deny-all\nFAKE line ALLOW\r\u001b[2J\u001b[31mred\u0000\u007f\tend';
const ESCAPED = 'deny-all\\nFAKE line ALLOW\\r\\x1b[2J\\x1b[31mred\\x00\\x7f\tend';

it('escapeControl writes every control character but tab as an escape, and leaves other text as it is', () => {
  expect(escapeControl(HOSTILE)).toBe(ESCAPED);
  const plain = 'Allowed by network policy "web" in namespace shop — ünïcödé 🚀\ttab';
  expect(escapeControl(plain)).toBe(plain);
});

function hostileEvent(): NetworkEvent {
  const data = icmpEcho({ src: '10.244.0.6', dst: '10.244.0.4', seq: 1 });
  const [sample] = decodePsampleSamples(
    encodePsample({ group: 42, proto: 0x800, data, userCookie: Uint8Array.from(Buffer.from('0200000100000064', 'hex')) }),
  );
  const event = { status: 'decoded', message: `Dropped by network policy ${HOSTILE}` } as unknown as OvnSampleEvent;
  return {
    timestampNs: 1_750_000_000_123_456_789n,
    group: 42,
    iifindex: 1,
    fields: packetFields(data, 0x800),
    packet: decodePacket(data, 0x800),
    src: { kind: 'pod', namespace: `shop${HOSTILE}`, name: 'client', network: 'default', port: 'shop_client' },
    verdict: 'drop',
    chain: [
      {
        verdict: 'drop',
        text: `Dropped by network policy ${HOSTILE}`,
        policy: `np:${HOSTILE}`,
        event,
        cookie: { obsDomainId: 0x02000001, obsPointId: 100 },
        samples: 1,
      },
    ],
    samples: [sample!],
  } as unknown as NetworkEvent;
}

it("watch's human line: one line whatever the names hold, their control characters escaped (the verdict's own colour kept)", () => {
  const line = new HumanFormatter(true, () => undefined).format(hostileEvent());
  expect(line.endsWith('\n')).toBe(true);
  expect(line.slice(0, -1)).not.toMatch(/[\n\r\u0000\u007f]/);
  expect(line).toContain(`np:${ESCAPED}`);
  expect(line).toContain(`Dropped by network policy ${ESCAPED}\n`);
  // The only escape sequences are the formatter's colour around the verdict.
  expect(line.match(/\u001b\[[0-9;]*m/g)?.length).toBe(2);
});

it("watch's human lines: endpoints and interface names escaped (each once, kept), the same on every line", () => {
  const formatter = new HumanFormatter(false, () => `eth${HOSTILE}`);
  const first = formatter.format(hostileEvent());
  const again = formatter.format(hostileEvent());
  for (const line of [first, again]) {
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u0000\u001b\u007f]/);
    expect(line).toContain(`shop${ESCAPED}/client → `);
    expect(line).toContain(`  eth${ESCAPED}  `);
  }
  expect(again).toBe(first);
});

it("watch's observ lines: the decoder's sentence escaped, each line still one line", () => {
  const out = new ObservFormatter({ logCookie: false, printFullPacket: false, enrich: true }).format(hostileEvent());
  const lines = out.split('\n');
  expect(lines[0]).toMatch(new RegExp(`OVN-K message: Dropped by network policy ${ESCAPED.replace(/[\\[\]]/g, '\\$&')}$`));
  expect(out).not.toMatch(/[\r\u0000\u001b\u007f]/);
  expect(lines).toHaveLength(4);
});

it("top's rows: policies, namespaces and pods escaped, one line each", () => {
  const row = {
    verdict: 'drop',
    policy: `np:${HOSTILE}`,
    namespace: HOSTILE,
    src: `shop/${HOSTILE}`,
    dst: '10.244.0.4',
    packets: 3,
    rate: 1.5,
    lastSeenMs: 1_000,
  } as const;
  const lines = topLines([row], 2_000);
  expect(lines).toHaveLength(2);
  expect(lines[1]).not.toMatch(/[\n\r\u0000\u001b\u007f]/);
  expect(lines[1]).toContain(`np:${ESCAPED}`);
});

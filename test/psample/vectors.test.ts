import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { decodePsample, PsampleDecodeError, type PsampleMessage } from '../../src/index';
import { cliOutput, runCliSync } from '../support/cli';
import { fixtureDir, vectors, type Vector } from '../support/fixtures';

/** What the reference decoder's JSON says, in PsampleMessage terms. */
function expectedFields(v: Vector): Record<string, unknown> {
  const a = v.expected.attrs;
  return {
    iifindex: a.IIFINDEX,
    rate: a.SAMPLE_RATE,
    origSize: a.ORIGSIZE,
    group: a.SAMPLE_GROUP,
    groupSeq: a.GROUP_SEQ,
    timestampNs: BigInt(a.TIMESTAMP as string),
    proto: a.PROTO,
    probability: a.SAMPLE_PROBABILITY === true,
    userCookie: a.USER_COOKIE === undefined ? undefined : Buffer.from(a.USER_COOKIE as string, 'hex').toString('hex'),
    dataLength: (a.DATA as { len: number }).len,
  };
}

function actualFields(m: PsampleMessage): Record<string, unknown> {
  return {
    iifindex: m.iifindex,
    rate: m.rate,
    origSize: m.origSize,
    group: m.group,
    groupSeq: m.groupSeq,
    timestampNs: m.timestampNs,
    proto: m.proto,
    probability: m.probability,
    userCookie: m.userCookie && Buffer.from(m.userCookie).toString('hex'),
    dataLength: m.data.byteLength,
  };
}

describe.each(vectors().map((v) => [v.name, v] as const))('real capture %s', (_name, v) => {
  it('decodes to exactly the reference fields', () => {
    expect(v.bytes.byteLength).toBe(v.expected.nlmsgLen);
    const messages = decodePsample(v.bytes, { familyId: v.expected.familyId });
    expect(messages).toHaveLength(1);
    const m = messages[0]!;
    expect(m.command).toBe('sample');
    expect(actualFields(m)).toEqual(expectedFields(v));
    expect(m.oifindex).toBeUndefined();
    expect(m.tunnel).toBeUndefined();
  });

  it('decodes to the same fields through the CLI, as JSON', () => {
    const out = cliOutput(['decode', '--file', path.join(fixtureDir, `${v.name}.hex`)]);
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const json = JSON.parse(lines[0]!) as Record<string, unknown>;
    const e = expectedFields(v);
    expect(json).toMatchObject({
      command: 'sample',
      iifindex: e.iifindex,
      rate: e.rate,
      origSize: e.origSize,
      group: e.group,
      groupSeq: e.groupSeq,
      timestampNs: String(e.timestampNs),
      proto: e.proto,
      probability: e.probability,
    });
    expect(json.userCookie).toBe(e.userCookie);
    expect((json.data as string).length).toBe((e.dataLength as number) * 2);
    expect(json.packet).toMatchObject({ link: 'ethernet', truncated: false });
    if (e.userCookie?.toString().length === 16) {
      const cookie = e.userCookie as string;
      const domain = Number.parseInt(cookie.slice(0, 8), 16);
      expect(json).toMatchObject({
        obsDomainId: domain,
        obsPointId: Number.parseInt(cookie.slice(8), 16),
        ovn: { appId: domain >>> 24, datapathKey: domain & 0xffffff },
      });
    }
  });
});

describe('decode errors', () => {
  const whole = vectors()[0]!.bytes;

  it('rejects every truncation of a real message with a typed error', () => {
    for (let cut = 1; cut < whole.byteLength; cut++) {
      expect(() => decodePsample(whole.subarray(0, cut))).toThrow(PsampleDecodeError);
    }
  });

  it('CLI: bad hex and malformed messages give a clear error, a non-zero exit and no output', () => {
    const badHex = runCliSync(['decode', '--hex', 'zz']);
    expect(badHex.status).toBe(2);
    expect(badHex.stdout).toBe('');
    expect(badHex.stderr).toMatch(/hexadecimal/);

    const good = Buffer.from(whole).toString('hex');
    const truncated = good.slice(0, good.length - 10);
    const malformed = runCliSync(['decode', '--hex', good, '--hex', truncated]);
    expect(malformed.status).toBe(1);
    expect(malformed.stdout).toBe('');
    expect(malformed.stderr).toMatch(/malformed netlink message.*PSAMPLE_MALFORMED/);
  });

  it('CLI: text format prints one human line per message', () => {
    const out = cliOutput(['decode', '--format', 'text', '--file', path.join(fixtureDir, 'ovs-2.hex')]);
    expect(out).toBe('group=10 in=4 app=43 dp=3 point=1012 10.0.0.1 > 10.0.0.2 ICMP echo-request id=381 seq=1 len=98\n');
  });
});

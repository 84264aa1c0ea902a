import { decodeOvsCookie, splitOvnObsDomain, type IpfixSample, type PsampleMessage, type PsampleSocket } from '../../../src/index';

/**
 * Collects samples from SOCKET until ENOUGH says so. The limit only bounds a
 * broken run (the kernel delivered nothing); it is not what the test asserts,
 * and the error lists what did arrive.
 */
export function collectSamples(
  socket: PsampleSocket,
  enough: (samples: readonly PsampleMessage[]) => boolean,
  what: string,
  limitMs = 60_000,
): Promise<PsampleMessage[]> {
  return new Promise((resolve, reject) => {
    const samples: PsampleMessage[] = [];
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      socket.off('sample', onSample);
      socket.off('error', onError);
      if (error) reject(error);
      else resolve(samples);
    };
    const onSample = (sample: PsampleMessage): void => {
      samples.push(sample);
      if (enough(samples)) finish();
    };
    const onError = (error: Error): void => finish(error);
    const timer = setTimeout(() => {
      const seen = samples.map((s) => `group ${s.group} seq ${s.groupSeq} proto 0x${s.proto.toString(16)}`);
      finish(new Error(`no ${what} after ${limitMs} ms; ${samples.length} samples came: ${seen.slice(0, 20).join('; ')}`));
    }, limitMs);
    socket.on('sample', onSample);
    socket.on('error', onError);
  });
}

export function hex(bytes: Uint8Array | undefined): string | undefined {
  return bytes === undefined ? undefined : Buffer.from(bytes).toString('hex');
}

/** The OVN ids a sample carries: Sampling_App id, datapath tunnel key, observation point. */
export interface Triple {
  appId: number;
  datapathKey: number;
  pointId: number;
}

/** A psample sample's ids, from its OVS cookie. */
export function tripleOf(sample: PsampleMessage): Triple {
  const ids = decodeOvsCookie(sample.userCookie ?? new Uint8Array());
  if (ids === undefined) throw new Error(`sample without an OVS cookie: ${JSON.stringify(sample.userCookie)}`);
  const { appId, datapathKey } = splitOvnObsDomain(ids.obsDomainId);
  return { appId, datapathKey, pointId: ids.obsPointId };
}

/** An IPFIX record's ids, from its message's observation domain and IE 138 (-1 without one). */
export function tripleOfRecord(record: IpfixSample): Triple {
  const { appId, datapathKey } = splitOvnObsDomain(record.observationDomainId);
  return { appId, datapathKey, pointId: record.observationPointId ?? -1 };
}

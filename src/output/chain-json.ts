import { formatCookieHex } from '../ovn/cookie';
import { chainText, type NetworkEvent, type VerdictStep } from '../events/network-event';
import { jsonString, member } from './json-text';
import { sharedJson } from './shared-json';

function stepJson(step: VerdictStep): string {
  const ids = step.cookie;
  return (
    `{"verdict":"${step.verdict}","text":${jsonString(step.text)},"policy":${jsonString(step.policy)},"samples":${step.samples}` +
    (ids === undefined ? '' : `,"cookie":"${formatCookieHex(ids)}","obsDomainId":${ids.obsDomainId},"obsPointId":${ids.obsPointId}`) +
    member('event', step.event === undefined ? undefined : sharedJson(step.event)) +
    '}'
  );
}

/**
 * What a JSON line says of a verdict chain, in UTF-8: the members before the endpoints
 * (`,"verdict":…,"message":…`) and after them (`,"chain":[…]`). watch's packet lines and its
 * flow records both copy these bytes.
 */
export interface ChainJson {
  readonly head: Buffer;
  readonly steps: Buffer;
}

// Chains are shared by every packet that takes the same way (src/events/verdict-chains.ts).
const chainJson = new WeakMap<readonly VerdictStep[], ChainJson>();

/** The JSON of `event`'s chain, made once per chain. */
export function chainJsonOf(event: Pick<NetworkEvent, 'chain' | 'verdict'>): ChainJson {
  let json = chainJson.get(event.chain);
  if (json === undefined) {
    let steps = '';
    for (const step of event.chain) steps += steps === '' ? stepJson(step) : `,${stepJson(step)}`;
    json = {
      head: Buffer.from(`,"verdict":"${event.verdict}","message":${jsonString(chainText(event))}`),
      steps: Buffer.from(`,"chain":[${steps}]`),
    };
    chainJson.set(event.chain, json);
  }
  return json;
}

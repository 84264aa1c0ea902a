import { InvalidOptionError } from '../psample/errors';
import type { Endpoint } from '../ovn/endpoint';
import { cidrContains, parseCidr, type Cidr } from '../packet/cidr';
import type { FlowSubject } from './network-event';
import { VERDICTS, type Verdict } from './verdict';

/** Each list matches when any of its values does; the event must match every list given. */
export interface NetworkEventFilter {
  /** Source: an address, a CIDR, or a pod as namespace/name (namespace/ for any pod of it). */
  readonly src?: readonly string[];
  readonly dst?: readonly string[];
  /** Either port of TCP, UDP or SCTP. */
  readonly port?: readonly number[];
  /** tcp, udp, sctp, icmp, icmpv6, arp, or an IP protocol number. */
  readonly proto?: readonly string[];
  /** A namespace the packet's pods or its policies are in. */
  readonly namespace?: readonly string[];
  /** A policy (name, namespace/name, or the short label such as anp:pass-monitoring) any step names. */
  readonly policy?: readonly string[];
  /** A verdict any step of the chain gives. */
  readonly action?: readonly Exclude<Verdict, 'unknown'>[];
  /** A sampling application any step came from. */
  readonly app?: readonly ('acl-new' | 'acl-est' | 'drop')[];
}

type Test = (event: FlowSubject) => boolean;

const PROTOCOLS: Readonly<Record<string, number>> = { icmp: 1, tcp: 6, udp: 17, icmpv6: 58, sctp: 132 };
const APPS = ['acl-new', 'acl-est', 'drop'];

function endpointTest(flag: string, value: string): (endpoint: Endpoint | undefined, ip: string | undefined) => boolean {
  const slash = value.indexOf('/');
  const cidr: Cidr | undefined = parseCidr(value);
  if (cidr !== undefined) return (_, ip) => ip !== undefined && cidrContains(cidr, ip);
  if (slash > 0) {
    const namespace = value.slice(0, slash);
    const name = value.slice(slash + 1);
    return (endpoint) => endpoint?.kind === 'pod' && endpoint.namespace === namespace && (name === '' || endpoint.name === name);
  }
  throw new InvalidOptionError(`${flag} ${value}: give an address, a CIDR (10.0.0.0/8) or a pod as namespace/name`);
}

function any<T>(values: readonly T[] | undefined, make: (value: T) => Test): Test | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const tests = values.map(make);
  return (event) => tests.some((test) => test(event));
}

function stepNamespaces(event: FlowSubject): (string | undefined)[] {
  return event.chain.map((step) => step.event?.owner?.namespace);
}

/**
 * Compiles a filter into a predicate; every value is checked here, so a wrong one fails before
 * any sample is read.
 */
export function compileFilter(filter: NetworkEventFilter): Test {
  const tests: Test[] = [];
  const add = (test: Test | undefined): void => {
    if (test !== undefined) tests.push(test);
  };
  for (const side of ['src', 'dst'] as const) {
    add(
      any(filter[side], (value) => {
        const test = endpointTest(`--${side}`, value);
        return (event) => test(event[side], event.fields[side]);
      }),
    );
  }
  add(
    any(filter.port, (port) => {
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidOptionError(`--port ${port}: give a port from 0 to 65535`);
      return (event) => event.fields.srcPort === port || event.fields.dstPort === port;
    }),
  );
  add(
    any(filter.proto, (value) => {
      const name = value.toLowerCase();
      if (name === 'arp') return (event) => event.fields.network === 'arp';
      const number = PROTOCOLS[name] ?? (/^\d+$/.test(name) ? Number(name) : undefined);
      if (number === undefined || number > 255)
        throw new InvalidOptionError(`--proto ${value}: use tcp, udp, sctp, icmp, icmpv6, arp or an IP protocol number`);
      return (event) => event.fields.protocol === number;
    }),
  );
  add(
    any(
      filter.namespace,
      (namespace) => (event) =>
        event.src?.namespace === namespace || event.dst?.namespace === namespace || stepNamespaces(event).includes(namespace),
    ),
  );
  add(
    any(
      filter.policy,
      (policy) => (event) =>
        event.chain.some((step) => {
          const owner = step.event?.owner;
          return (
            step.policy === policy ||
            (owner !== undefined && (owner.name === policy || `${owner.namespace ?? ''}/${owner.name ?? ''}` === policy)) ||
            (step.event?.acl?.name !== undefined && step.event.acl.name === policy)
          );
        }),
    ),
  );
  add(
    any(filter.action, (action) => {
      if (!VERDICTS.includes(action)) throw new InvalidOptionError(`--action ${action}: use ${VERDICTS.join(', ')}`);
      return (event) => event.chain.some((step) => step.verdict === action);
    }),
  );
  add(
    any(filter.app, (app) => {
      if (!APPS.includes(app)) throw new InvalidOptionError(`--app ${app}: use ${APPS.join(', ')}`);
      return (event) => event.chain.some((step) => step.event?.app === app);
    }),
  );
  if (tests.length === 0) return () => true;
  return (event) => tests.every((test) => test(event));
}

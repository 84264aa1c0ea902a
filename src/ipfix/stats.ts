/**
 * Every count of an IPFIX source's stats(), and what it counts: the one list (the README's
 * table says the same in prose). Records are data records; OVS puts one in each message.
 */
export const IPFIX_STATS = {
  datagrams: 'datagrams read from the socket (or the capture)',
  rejectedExporter: 'datagrams from an address outside the exporter allow-list, dropped undecoded',
  malformed: 'datagrams that are not well-formed IPFIX messages, dropped whole',
  messages: 'well-formed IPFIX messages read',
  records: 'flow records decoded (each delivered, or counted in queueDrops or closeDiscards)',
  received: 'flow records delivered to listeners and iterators',
  malformedRecords: 'data sets whose records run past the set: what was left of the set',
  reservedSets: 'sets of the ids RFC 7011 reserves (4-255), skipped',
  templates: 'templates and options templates received, refreshes included',
  templateWithdrawals: 'templates withdrawn by their exporter',
  templatesExpired: 'templates dropped for not being refreshed within the template lifetime',
  templateMissing: 'data sets that arrived before any template they could be decoded with',
  templateLate: 'of those, sets decoded once their template came within the wait',
  templateLost: 'of those, sets given up: no template within the wait, or too many waiting',
  templateFallback: "records decoded with the same exporter's template of another domain (OVS < 3.2)",
  optionsRecords: 'options records (exporter statistics and others), not samples',
  sequenceLost: "records the exporters' sequence numbers say were sent and never arrived (whatever lost them)",
  sequenceDisorder: 'messages whose sequence number went backwards (reordered, duplicated, or the exporter restarted)',
  exporterNotSent: 'packets the exporters say they sampled but could not send (their notSentPacketTotalCount)',
  receiveBufferDrops: "datagrams the kernel dropped because the socket's receive buffer was full (/proc/net/udp)",
  queueDrops: 'records dropped because iterators held queueCapacity records undelivered',
  closeDiscards: 'records decoded, waiting for a template or still in the socket when close() was called',
  pending: 'data sets waiting for their template right now',
  queued: 'records waiting for delivery right now',
} as const;

export type IpfixStatName = keyof typeof IPFIX_STATS;

/** The counts that are levels now (they go down as well as up); every other one only grows. */
export const IPFIX_LEVELS: ReadonlySet<IpfixStatName> = new Set(['pending', 'queued']);
export type IpfixStats = Record<IpfixStatName, number>;

export function emptyIpfixStats(): IpfixStats {
  return Object.fromEntries(Object.keys(IPFIX_STATS).map((name) => [name, 0])) as IpfixStats;
}

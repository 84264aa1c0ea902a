import { Command } from 'commander';
import { pino, type Logger } from 'pino';
import { formatCookieHex, observationIdsFromCookie, parseCookieHex, type ObservationIds } from '../../ovn/cookie';
import type { OvnSampleEvent } from '../../ovn/event';
import { formatOvnEvent } from '../../ovn/event-text';
import { formatSample, type LineFormat } from '../../output/sample-lines';
import { decodePsampleSamples } from '../../psample/decode';
import { decodeIpfixDatagrams, type DecodedIpfix } from '../../ipfix/decode';
import type { IpfixSample } from '../../ipfix/types';
import { ipfixSampleJson } from '../../output/ipfix-sample-json';
import { ipfixSampleText } from '../../output/ipfix-sample-text';
import type { PsampleSample } from '../../psample/sample';
import { defineCommand } from '../command';
import { CliUsageError } from '../errors';
import { sslOptions, type SslFlags } from '../node-databases';
import { addOvnOptions, addSslOptions, lineFormatOption, type LogFlags } from '../options';
import { findOvnRemotes, requireNorthbound, startOvnSession, type OvnSessionOptions } from '../ovn-session';
import { collect } from '../parse';
import { datagramsFromFile, datagramsFromHex, udpDatagramsFromCapture } from '../read-input';

interface DecodeFlags extends LogFlags, SslFlags {
  hex?: string[];
  file?: string;
  cookie?: string;
  ipfix?: string;
  nb?: string;
  sb?: string;
  format: LineFormat;
}

/** Decodes every datagram before printing anything, so bad input never leaves half an answer. */
function decodeDatagrams(flags: DecodeFlags): PsampleSample[] {
  if ((flags.hex?.length ?? 0) > 0 === (flags.file !== undefined)) {
    throw new CliUsageError('decode: give either --hex HEX (repeatable) or --file FILE');
  }
  const datagrams = flags.file !== undefined ? datagramsFromFile(flags.file) : datagramsFromHex(flags.hex ?? []);
  return datagrams.flatMap((bytes, i) => {
    const messages = decodePsampleSamples(bytes);
    if (messages.length === 0) {
      throw new CliUsageError(`input ${i + 1} (${bytes.byteLength} bytes) holds no psample message`);
    }
    return messages;
  });
}

/** The user named a database, or this node has the OVN databases: then samples are decoded through OVN. */
const ovnWanted = (options: OvnSessionOptions): boolean =>
  options.nb !== undefined || options.sb !== undefined || findOvnRemotes({}).nb !== undefined;

const quiet = (): Logger => pino({ level: 'silent' });

/** Runs `use` with a decoder synced to the live databases, then disconnects. */
async function withOvnDecoder<T>(
  options: OvnSessionOptions,
  log: Logger,
  use: (decode: (ids: ObservationIds) => Promise<OvnSampleEvent>, decodeCookie: (cookie: Uint8Array) => OvnSampleEvent) => Promise<T>,
): Promise<T> {
  const remotes = findOvnRemotes(options);
  const session = await startOvnSession({ ...remotes, nb: requireNorthbound(remotes) }, options.ssl, log, { pods: false });
  try {
    return await use(
      (ids) => session.decoder.decodeWithDetails(ids.obsDomainId, ids.obsPointId),
      (cookie) => session.decoder.decodeCookie(cookie),
    );
  } finally {
    await session.close();
  }
}

/**
 * Decodes OVN sample cookies against the live databases: connects, waits for the initial sync,
 * decodes each cookie, then disconnects. For `decode --cookie` and for `decode --hex` (pass the
 * psample message's user cookie, or its observation ids).
 */
export async function decodeWithOvn(
  cookies: readonly (Uint8Array | ObservationIds)[],
  options: OvnSessionOptions = {},
  log: Logger = quiet(),
): Promise<OvnSampleEvent[]> {
  return withOvnDecoder(options, log, (decode, decodeCookie) =>
    Promise.all(
      cookies.map(async (cookie) => {
        const ids = cookie instanceof Uint8Array ? observationIdsFromCookie(cookie) : cookie;
        return ids === undefined ? decodeCookie(cookie as Uint8Array) : decode(ids);
      }),
    ),
  );
}

export interface DecodeCookieOptions extends OvnSessionOptions {
  /** --cookie: 16 hex digits, obs_domain_id then obs_point_id. */
  readonly cookie: string;
  readonly format?: LineFormat;
}

/** `ovn-psample decode --cookie HEX`: the JSON line ({cookie, event}) or the text to print. */
export async function decodeCookieCommand(options: DecodeCookieOptions, log: Logger = quiet()): Promise<string> {
  const ids = parseCookieHex(options.cookie);
  const event = await withOvnDecoder(options, log, (decode) => decode(ids));
  const cookie = formatCookieHex(ids);
  return options.format === 'text' ? `cookie ${cookie}\n${formatOvnEvent(event)}` : JSON.stringify({ cookie, event });
}

/**
 * `decode --ipfix FILE`: every UDP datagram of a capture (pcap or pcapng, any port) read as
 * IPFIX, in capture order and time, as a live source would have (see decodeIpfixDatagrams).
 */
export function decodeIpfixCapture(path: string): DecodedIpfix & { frames: number; skipped: Record<string, number> } {
  const capture = udpDatagramsFromCapture(path, '--ipfix');
  const decoded = decodeIpfixDatagrams(
    capture.datagrams.map((d) => ({ bytes: d.payload, exporter: { address: d.src, port: d.srcPort }, timeMs: d.timeMs })),
  );
  return { ...decoded, frames: capture.frames, skipped: capture.skipped };
}

/** One output line of an IPFIX record; with an OVN event, as formatSample() adds it. */
export function formatIpfixSample(sample: IpfixSample, format: LineFormat, event?: OvnSampleEvent): string {
  return format === 'text' ? ipfixSampleText(sample, event) : ipfixSampleJson(sample, event);
}

async function decodeIpfixCommand(path: string, format: LineFormat, ovn: OvnSessionOptions, log: Logger): Promise<void> {
  const { samples, stats, malformed, frames, skipped } = decodeIpfixCapture(path);
  const withPoint = samples.filter((sample) => sample.observationPointId !== undefined);
  const events = ovnWanted(ovn)
    ? await decodeWithOvn(
        withPoint.map((sample) => ({ obsDomainId: sample.observationDomainId, obsPointId: sample.observationPointId! })),
        ovn,
        log,
      )
    : undefined;
  const byRecord = new Map(withPoint.map((sample, i) => [sample, events?.[i]]));
  let lines = '';
  for (const sample of samples) lines += `${formatIpfixSample(sample, format, byRecord.get(sample))}\n`;
  process.stdout.write(lines);
  for (const { index, reason } of malformed.slice(0, 10))
    log.warn({ datagram: index + 1 }, `UDP datagram ${index + 1} is not IPFIX: ${reason}`);
  const lost = stats.templateLost + stats.sequenceLost + stats.malformed + stats.malformedRecords;
  log[lost > 0 ? 'warn' : 'info'](
    { frames, skipped, ...stats },
    `${samples.length} record(s) from ${stats.datagrams} UDP datagram(s) of ${frames} frame(s); ` +
      `malformed=${stats.malformed} templateLost=${stats.templateLost} templateFallback=${stats.templateFallback} ` +
      `sequenceLost=${stats.sequenceLost} exporterNotSent=${stats.exporterNotSent}` +
      (stats.templateLost > 0
        ? ': records whose template is not in the capture cannot be decoded (start the capture before the exporter sends its templates: OVS sends them when its IPFIX row is created, then every 10 minutes)'
        : ''),
  );
}

export function decodeCommand(): Command {
  const command = new Command('decode')
    .description(
      'decode psample netlink messages given as hex or read from a file, one output line per message; or an IPFIX capture (--ipfix)',
    )
    .option('--hex <hex>', 'one whole netlink message (datagram) as hex; repeatable', collect)
    .option('--file <file>', 'hex lines (one datagram per line) or a binary datagram; - for stdin')
    .option('--cookie <hex>', 'an OVS sample cookie (obs_domain_id, obs_point_id: 16 hex digits) to resolve through OVN')
    .option('--ipfix <file>', 'a capture (pcap or pcapng, e.g. tcpdump -w FILE udp port 4739; - for stdin): one line per IPFIX data record')
    .addOption(lineFormatOption());
  addOvnOptions(command, { nb: '', sb: '' });
  addSslOptions(command);
  return defineCommand(command, async (flags: DecodeFlags, log) => {
    const write = (line: string): boolean => process.stdout.write(`${line}\n`);
    const ssl = sslOptions(flags);
    const ovn: OvnSessionOptions = {
      ...(flags.nb === undefined ? {} : { nb: flags.nb }),
      ...(flags.sb === undefined ? {} : { sb: flags.sb }),
      ...(ssl === undefined ? {} : { ssl }),
    };
    if (flags.ipfix !== undefined) {
      if (flags.hex !== undefined || flags.file !== undefined || flags.cookie !== undefined) {
        throw new CliUsageError('decode: --ipfix decodes a capture alone; give it without --hex, --file or --cookie');
      }
      await decodeIpfixCommand(flags.ipfix, flags.format, ovn, log);
      return;
    }
    if (flags.cookie !== undefined) {
      if (flags.hex !== undefined || flags.file !== undefined) {
        throw new CliUsageError('decode: --cookie decodes a cookie alone; give it without --hex or --file');
      }
      write(await decodeCookieCommand({ ...ovn, cookie: flags.cookie, format: flags.format }, log));
      return;
    }
    const messages = decodeDatagrams(flags);
    const events = ovnWanted(ovn)
      ? await decodeWithOvn(
          messages.map((m) => m.userCookie ?? new Uint8Array(0)),
          ovn,
          log,
        )
      : undefined;
    messages.forEach((message, i) => write(formatSample(message, flags.format, events?.[i])));
  });
}

import { chainText, eventNamespace, policyText, sideText, type FlowSubject, type VerdictStep } from '../events/network-event';
import type { Endpoint } from '../ovn/endpoint';
import { addon } from '../native/binding';
import { escapeControl } from './control-text';

const VERDICT = addon.HumanLineWriter.verdict;

/**
 * What watch's human line shows of the databases and the node (native/render/event_human.h
 * writes the rest: clock, verdict column, tuple, widths), escaped: made once per route or event.
 */
export interface HumanTexts {
  /** HumanLineWriter.verdict's number. */
  readonly verdict: number;
  readonly policy: string;
  readonly namespace: string;
  /** "SRC → DST": pods when known, else addresses. */
  readonly sides: string;
  readonly sentence: string;
}

/** What a line shows of its chain, escaped: chains are shared by every packet that takes the same way. */
interface ChainText {
  readonly policy: string;
  readonly sentence: string;
}
const chainTexts = new WeakMap<readonly VerdictStep[], ChainText>();

function chainTextOf(subject: FlowSubject): ChainText {
  let text = chainTexts.get(subject.chain);
  if (text === undefined) {
    text = { policy: escapeControl(policyText(subject)), sentence: escapeControl(chainText(subject)) };
    chainTexts.set(subject.chain, text);
  }
  return text;
}

// Escaping is per character, so each side is escaped on its own: an endpoint's text once per
// endpoint (PodDirectory shares one per address), an address (the native decoder's text) never.
const escapedSides = new WeakMap<Endpoint, string>();

function escapedSide(subject: FlowSubject, side: 'src' | 'dst'): string {
  const endpoint = subject[side];
  if (endpoint === undefined) return sideText(subject, side);
  let text = escapedSides.get(endpoint);
  if (text === undefined) {
    text = escapeControl(sideText(subject, side));
    escapedSides.set(endpoint, text);
  }
  return text;
}

/** The human line's texts of a packet, a route's or an event's. */
export function humanTextsOf(subject: FlowSubject): HumanTexts {
  const chain = chainTextOf(subject);
  return {
    verdict: VERDICT[subject.verdict],
    policy: chain.policy,
    namespace: escapeControl(eventNamespace(subject) ?? '-'),
    sides: `${escapedSide(subject, 'src')} → ${escapedSide(subject, 'dst')}`,
    sentence: chain.sentence,
  };
}

/**
 * The local time of day of a second since the epoch, in seconds since local midnight, as
 * JavaScript's Date says it: the time zone is Date's (TZ, ICU's zone data), which the native
 * writer takes from here once per second (the node's C library may have no zone data at all).
 */
export function localSecondsOfDay(epochSeconds: number): number {
  const date = new Date(epochSeconds * 1000);
  return date.getHours() * 3600 + date.getMinutes() * 60 + date.getSeconds();
}

/** Interface names met before they start over: made-up names must not grow the map without end. */
const MAX_INTERFACE_NAMES = 4096;
const escapedNames = new Map<string, string>();

/** An interface's name as the line shows it, escaped (once per name). */
export function interfaceText(name: string): string {
  let text = escapedNames.get(name);
  if (text === undefined) {
    if (escapedNames.size >= MAX_INTERFACE_NAMES) escapedNames.clear();
    text = escapeControl(name);
    escapedNames.set(name, text);
  }
  return text;
}

/** The interface column of a psample packet: the node's name for its input ifindex, else "ifN". */
export function ifindexText(name: string | undefined, ifindex: number): string {
  return name === undefined ? `if${ifindex}` : interfaceText(name);
}

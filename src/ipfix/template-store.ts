import type { TemplateRecord, TemplateWithdrawal } from './message';
import { compileTemplate, type CompiledTemplate } from './template';

interface Stored {
  readonly template: CompiledTemplate;
  readonly domain: number;
  readonly receivedAt: number;
}

/** What a lookup found: the template, and the domain it was defined for when that is another one. */
export interface TemplateMatch {
  readonly template: CompiledTemplate;
  readonly fallbackDomain: number | undefined;
}

/**
 * The templates of every exporter, per (exporter address, observation domain, template id). Keyed
 * by address, not by UDP source port: Open vSwitch sends from a new port whenever its IPFIX row
 * changes, and its templates stay valid. Over UDP templates are refreshed, never trusted for
 * ever: one not heard again within `lifetimeMs` is expired (RFC 7011 section 8.4).
 *
 * Fallback: Open vSwitch before 3.2.0 (3.1.1, 3.0.4, 2.17.6) sends templates for one observation
 * domain per exporter only, so OVN's other datapaths' records come without a template of their
 * own; with `fallback`, such a record decodes with the same exporter's template of the same id
 * (the most recent one, when several domains have it).
 */
export class TemplateStore {
  // address -> template id -> domain -> template (nested maps: no key string made per lookup)
  readonly #templates = new Map<string, Map<number, Map<number, Stored>>>();
  readonly #lifetimeMs: number;
  readonly #fallback: boolean;
  /** Templates dropped for not being refreshed in time, since this store was made. */
  expired = 0;

  constructor(lifetimeMs: number, fallback: boolean) {
    this.#lifetimeMs = lifetimeMs;
    this.#fallback = fallback;
  }

  add(address: string, domain: number, record: TemplateRecord, now: number): CompiledTemplate {
    let ids = this.#templates.get(address);
    if (ids === undefined) this.#templates.set(address, (ids = new Map<number, Map<number, Stored>>()));
    let domains = ids.get(record.templateId);
    if (domains === undefined) ids.set(record.templateId, (domains = new Map<number, Stored>()));
    const template = compileTemplate(record);
    domains.set(domain, { template, domain, receivedAt: now });
    return template;
  }

  /** Removes what a withdrawal names; returns how many templates that was. */
  withdraw(address: string, domain: number, withdrawal: TemplateWithdrawal): number {
    const ids = this.#templates.get(address);
    if (ids === undefined) return 0;
    if (!withdrawal.all) return ids.get(withdrawal.templateId)?.delete(domain) === true ? 1 : 0;
    let removed = 0;
    for (const domains of ids.values()) {
      const stored = domains.get(domain);
      if (stored !== undefined && stored.template.record.options === withdrawal.options) {
        domains.delete(domain);
        removed++;
      }
    }
    return removed;
  }

  find(address: string, domain: number, templateId: number, now: number): TemplateMatch | undefined {
    const domains = this.#templates.get(address)?.get(templateId);
    if (domains === undefined) return undefined;
    const own = this.#live(domains, domain, now);
    if (own !== undefined) return { template: own.template, fallbackDomain: undefined };
    if (!this.#fallback) return undefined;
    let newest: Stored | undefined;
    for (const other of domains.keys()) {
      const stored = this.#live(domains, other, now);
      if (stored !== undefined && (newest === undefined || stored.receivedAt > newest.receivedAt)) newest = stored;
    }
    return newest === undefined ? undefined : { template: newest.template, fallbackDomain: newest.domain };
  }

  #live(domains: Map<number, Stored>, domain: number, now: number): Stored | undefined {
    const stored = domains.get(domain);
    if (stored === undefined || now - stored.receivedAt <= this.#lifetimeMs) return stored;
    domains.delete(domain);
    this.expired++;
    return undefined;
  }
}

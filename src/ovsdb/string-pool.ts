/**
 * Shares one copy of strings that repeat across many rows (enum values such as "allow-related",
 * map keys such as "k8s.ovn.org/name"): a parsed message holds a separate copy of each, which
 * for 100,000 ACLs costs tens of MB. Bounded, so unique values cannot make it grow forever.
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  constructor(private readonly capacity = 65_536) {}

  intern(text: string): string {
    const shared = this.strings.get(text);
    if (shared !== undefined) {
      return shared;
    }
    if (this.strings.size < this.capacity) {
      this.strings.set(text, text);
    }
    return text;
  }
}

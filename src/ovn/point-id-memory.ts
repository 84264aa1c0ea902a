import type { OvnAclVerdict } from './event';

/** How many point ids of changed or deleted ACLs are remembered to explain stale samples. */
const REMEMBERED_POINT_IDS = 65_536;

/** A bounded memory of what observation point ids meant, oldest forgotten first. */
export class PointIdMemory {
  private readonly verdicts = new Map<number, OvnAclVerdict>();

  remember(pointId: number, verdict: OvnAclVerdict): void {
    this.verdicts.delete(pointId);
    this.verdicts.set(pointId, verdict);
    if (this.verdicts.size > REMEMBERED_POINT_IDS) {
      const oldest = this.verdicts.keys().next();
      if (oldest.done !== true) {
        this.verdicts.delete(oldest.value);
      }
    }
  }

  recall(pointId: number): OvnAclVerdict | undefined {
    return this.verdicts.get(pointId);
  }
}

import type { TableView } from './table-store';
import type { Row } from './row';

/** Columns of the _Server database's Database table that decide whether a member may be used. */
export const SERVER_DATABASE_COLUMNS = ['name', 'model', 'connected', 'leader', 'index', 'schema'] as const;

export interface ServerDatabaseRow extends Row {
  readonly name: string;
  readonly model: string;
  readonly connected: boolean;
  readonly leader: boolean;
  /** Raft log index of a clustered database; absent for standalone ones. */
  readonly index: number | undefined;
  /** Empty while a cluster member has not joined yet or a relay has not reached its source. */
  readonly schema: string | undefined;
}

/**
 * Decides from a server's _Server.Database rows whether it may be used, with the OVS IDL's rules:
 * the database must exist (when one is named); a clustered or relay database must have its schema
 * and be connected to its cluster; with `leaderOnly` a clustered follower is refused; and a
 * clustered database must not be older than the newest index already seen, or a failover to a
 * lagging member would roll the mirrored data back in time. Lives as long as the client, so the
 * newest index survives reconnections.
 */
export class ServerDatabaseJudge {
  /** Highest raft index seen per clustered database, on any member. */
  private readonly minIndexes = new Map<string, number>();

  constructor(
    /** Only this database is judged when given, else every clustered or relay one. */
    private readonly database: string | undefined,
    private readonly leaderOnly: boolean,
  ) {}

  /** Why this server should not be used, or undefined (and its indexes remembered) when it is suitable. */
  unsuitableReason(rows: TableView<ServerDatabaseRow>): string | undefined {
    const judged = [...rows.values()].filter((row) => this.database === undefined || row.name === this.database);
    if (this.database !== undefined && judged.length === 0) {
      return `it does not serve database ${this.database}`;
    }
    for (const row of judged) {
      const reason = this.rowReason(row);
      if (reason !== undefined) {
        return reason;
      }
    }
    for (const row of judged) {
      if (row.model === 'clustered' && row.index !== undefined) {
        this.minIndexes.set(row.name, Math.max(row.index, this.minIndexes.get(row.name) ?? 0));
      }
    }
    return undefined;
  }

  private rowReason(row: ServerDatabaseRow): string | undefined {
    if (row.model !== 'clustered' && row.model !== 'relay') {
      return undefined;
    }
    if (row.schema === undefined || row.schema === '') {
      return row.model === 'relay'
        ? `its relay database ${row.name} has not reached its source yet (no schema)`
        : `its clustered database ${row.name} has not joined the cluster yet (no schema)`;
    }
    if (!row.connected) {
      return `its ${row.model} database ${row.name} is not connected to the cluster`;
    }
    if (row.model === 'relay') {
      return undefined;
    }
    if (this.leaderOnly && !row.leader) {
      return `it is not the leader of clustered database ${row.name}`;
    }
    const minIndex = this.minIndexes.get(row.name) ?? 0;
    if (row.index !== undefined && row.index < minIndex) {
      return `its clustered database ${row.name} is stale (raft index ${row.index}, already seen ${minIndex})`;
    }
    return undefined;
  }
}

import type { TableView } from './table-store';
import type { Row } from './row';

/** Columns of the _Server database's Database table that decide whether a member may be used. */
export const SERVER_DATABASE_COLUMNS = ['name', 'model', 'connected', 'leader'] as const;

export interface ServerDatabaseRow extends Row {
  readonly name: string;
  readonly model: string;
  readonly connected: boolean;
  readonly leader: boolean;
}

/**
 * Why this server should not be used, judged from its _Server.Database rows as the OVS IDL does:
 * a clustered or relay database that is not connected to its cluster serves stale data, and
 * with `leaderOnly` a clustered follower is refused. Only `database` is judged when given, else
 * every clustered database the server holds. Returns undefined when the server is suitable.
 */
export function unsuitableReason(rows: TableView<ServerDatabaseRow>, database: string | undefined, leaderOnly: boolean): string | undefined {
  for (const row of rows.values()) {
    if (database !== undefined && row.name !== database) {
      continue;
    }
    if (row.model !== 'standalone' && !row.connected) {
      return `its ${row.model} database ${row.name} is not connected to the cluster`;
    }
    if (leaderOnly && row.model === 'clustered' && !row.leader) {
      return `it is not the leader of clustered database ${row.name}`;
    }
  }
  return undefined;
}

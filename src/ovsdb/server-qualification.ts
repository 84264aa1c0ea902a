import { OvsdbConnectionError, OvsdbListenerError, OvsdbRpcError } from '../errors';
import { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import { MonitorSubscription } from './monitor';
import type { DatabaseSchema } from './schema';
import { SERVER_DATABASE_COLUMNS, type ServerDatabaseJudge, type ServerDatabaseRow } from './server-database';

/** The _Server monitor of one session. */
export interface ServerWatch {
  /** Routes the _Server monitor's notifications (and its cancellation, which ends the session). */
  handle(session: JsonRpcSession, method: string, params: unknown): boolean;
}

/**
 * Refuses a member whose _Server.Database rows say it is cut off from its cluster (or, with
 * leaderOnly, is not the leader), and keeps watching so a later loss drops the session. Then
 * declares the client db-change-aware (ovsdb-server(7)): a database converted to a new schema
 * (an OVN upgrade) or removed is announced with monitor_canceled instead of a dropped connection.
 */
export async function qualifyServer(
  session: JsonRpcSession,
  name: string,
  judge: ServerDatabaseJudge,
  schemaOf: (database: string) => Promise<DatabaseSchema>,
  reportListenerError: (error: OvsdbListenerError) => void,
  /** Called before the monitor reply is awaited, so notifications in the same read find the watch. */
  route: (watch: ServerWatch) => void,
): Promise<void> {
  let schema: DatabaseSchema;
  try {
    schema = await schemaOf('_Server');
  } catch (error) {
    if (error instanceof OvsdbRpcError) {
      // Servers before OVS 2.9 have no _Server database: nothing to judge, nothing to be aware of.
      return;
    }
    throw error;
  }
  const cache = new TableCache(schema, { Database: { columns: [...SERVER_DATABASE_COLUMNS] } });
  const subscription = new MonitorSubscription('_Server', cache, '_Server', ['monitor_cond', 'monitor'], {
    reportListenerError,
    // A _Server mirror that went wrong could hide a member's loss of its cluster: start afresh.
    diverged: () => session.close(new OvsdbConnectionError(`Left ${name}: its _Server database updates contradict each other.`)),
  });
  const watch: ServerWatch = {
    handle(from, method, params) {
      if (method === 'monitor_canceled' && Array.isArray(params) && subscription.canceledByServer(from, params[0])) {
        from.close(new OvsdbConnectionError(`Left ${name}: the server cancelled its _Server monitor.`));
        return true;
      }
      return subscription.handle(from, method, params);
    },
  };
  route(watch);
  await subscription.start(session, schema);
  const rows = cache.table<ServerDatabaseRow>('Database');
  const reason = judge.unsuitableReason(rows);
  if (reason !== undefined) {
    throw new OvsdbConnectionError(`Skipped ${name}: ${reason}.`);
  }
  cache.on('batch', () => {
    const lost = judge.unsuitableReason(rows);
    if (lost !== undefined) {
      session.close(new OvsdbConnectionError(`Left ${name}: ${lost}.`));
    }
  });
  try {
    await session.request('set_db_change_aware', [true]);
  } catch (error) {
    if (!(error instanceof OvsdbRpcError)) {
      throw error;
    }
    // A server without the extension drops the connection on a conversion instead: a reconnect resyncs.
  }
}

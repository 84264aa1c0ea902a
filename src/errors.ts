/** Base class of every error ovn-psample throws: `code` is stable, the message says what to do. */
export class OvnPsampleError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An OVSDB schema (RFC 7047 section 3.2) is malformed or lacks a table or column the caller needs. */
export class OvsdbSchemaError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OVSDB_SCHEMA', message, options);
  }
}

/** A remote string is not in ovn-nbctl syntax (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT, comma-separated). */
export class OvsdbRemoteError extends OvnPsampleError {
  constructor(message: string) {
    super('OVSDB_REMOTE', message);
  }
}

/** One remote and the last reason it could not be used (undefined: not tried yet). */
export interface OvsdbRemoteAttempt {
  readonly remote: string;
  readonly error: Error | undefined;
}

/** No member of the remote list could be reached (or none qualified: connected, leader when required). */
export class OvsdbConnectionError extends OvnPsampleError {
  /** When no remote was usable in time: every remote with its last error (also in the message). */
  readonly attempts: readonly OvsdbRemoteAttempt[];

  constructor(message: string, options?: { cause?: unknown; attempts?: readonly OvsdbRemoteAttempt[] }) {
    super('OVSDB_CONNECTION', message, options);
    this.attempts = options?.attempts ?? [];
  }
}

/** The server broke the JSON-RPC / OVSDB protocol, or answered a request with a JSON-RPC error. */
export class OvsdbProtocolError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OVSDB_PROTOCOL', message, options);
  }
}

/**
 * The server sent a message larger than the client accepts (maxMessageBytes): a hostile or
 * broken server, or a database whose monitored tables outgrew the limit.
 */
export class OvsdbMessageSizeError extends OvnPsampleError {
  readonly limit: number;

  constructor(limit: number, received: number) {
    super(
      'OVSDB_MESSAGE_SIZE',
      `The OVSDB server sent a message of more than ${limit} bytes (${received} received so far), the maxMessageBytes limit: raise options.maxMessageBytes if the database is that big, or check the remote.`,
    );
    this.limit = limit;
  }
}

/** A transaction was rejected: `results` holds the per-operation results the server returned. */
export class OvsdbTransactionError extends OvnPsampleError {
  readonly results: readonly unknown[];

  constructor(message: string, results: readonly unknown[]) {
    super('OVSDB_TRANSACTION', message);
    this.results = results;
  }
}

/** The connection went away while a request was in flight; a transact may or may not have committed. */
export class OvsdbDisconnectedError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OVSDB_DISCONNECTED', message, options);
  }
}

/** The client was closed or its AbortSignal fired before the operation finished. */
export class OvsdbClosedError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OVSDB_CLOSED', message, options);
  }
}

/** A cookie given on the command line is not the 8-byte OVN observation cookie. */
export class OvnCookieError extends OvnPsampleError {
  constructor(message: string) {
    super('OVN_COOKIE', message);
  }
}

/** The OVN databases lack the tables sampling needs (Sample, Sampling_App: OVN 24.09 or newer). */
export class OvnSchemaUnsupportedError extends OvnPsampleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OVN_SCHEMA_UNSUPPORTED', message, options);
  }
}

/** The server answered a JSON-RPC request with an error; `reply` is its "error" member as sent. */
export class OvsdbRpcError extends OvnPsampleError {
  readonly method: string;
  readonly reply: unknown;

  constructor(method: string, reply: unknown) {
    super(
      'OVSDB_RPC',
      `The OVSDB server refused "${method}": ${JSON.stringify(reply)}. Check the database name, schema version and permissions.`,
    );
    this.method = method;
    this.reply = reply;
  }
}

/**
 * Event listeners (a TableCache's, an OvsdbClient's 'status') threw. What they were told about
 * went on regardless (a cache update is complete); `errors` holds what they threw.
 */
export class OvsdbListenerError extends OvnPsampleError {
  readonly errors: readonly unknown[];

  constructor(listeners: string, errors: readonly unknown[]) {
    const first = errors[0];
    super(
      'OVSDB_LISTENER',
      `${listeners} threw ${errors.length} time(s) (first: ${first instanceof Error ? first.message : String(first)}); the update went on regardless. Fix the listener.`,
      { cause: first },
    );
    this.errors = errors;
  }
}

/** An option is outside the range it can work with; the message names it and the accepted range. */
export class OvsdbOptionError extends OvnPsampleError {
  constructor(message: string) {
    super('OVSDB_OPTION', message);
  }
}

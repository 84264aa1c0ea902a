/** An emitter whose 'error' event carries an Error. */
interface ErrorEmitter {
  listenerCount(event: 'error'): number;
  emit(event: 'error', error: Error): boolean;
}

/**
 * Emits 'error' only while someone listens: these errors are already counted in stats, and an
 * unheard 'error' would make EventEmitter throw and take the process down for a recoverable problem.
 */
export function emitErrorIfHeard(emitter: ErrorEmitter, error: Error): void {
  if (emitter.listenerCount('error') > 0) {
    emitter.emit('error', error);
  }
}

/**
 * Reconcile outcomes that are not plain errors.
 */

/**
 * An error that retrying will not fix (invalid spec, missing permission by design, …): the request is not
 * re-queued, and it is counted in `controller_runtime_terminal_reconcile_errors_total` (and as an error).
 * Wrapping works too: any error whose `cause` chain contains a TerminalError is terminal.
 */
export class TerminalError extends Error {
  override name = 'TerminalError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The designated "panic" path: a reconciler (or code it calls) throws this for a bug that must not happen.
 * Like a recovered Go panic it is counted in `controller_runtime_reconcile_panics_total`, reported as an error,
 * re-queued with backoff, and the worker survives. Throwing a value that is not an `Error` counts the same way.
 */
export class PanicError extends Error {
  override name = 'PanicError';
}

/** True when `err` is, or wraps (via `cause`), a {@link TerminalError}. */
export function isTerminal(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

/** True when `err` is a panic: a thrown non-Error value, or a {@link PanicError}. */
export function isPanic(err: unknown): boolean {
  return !(err instanceof Error) || err instanceof PanicError;
}

/**
 * Reconcile outcomes that are not plain errors.
 */
import { CtrlmetricsError } from '../util/errors.js';

/**
 * An error that retrying will not fix (invalid spec, missing permission by design, …): the request is not
 * re-queued, and it is counted in `controller_runtime_terminal_reconcile_errors_total` (and as an error).
 * Wrapping works too: any error whose `cause` chain contains a TerminalError is terminal.
 */
export class TerminalError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_TERMINAL';
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
export class PanicError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_PANIC';
  override name = 'PanicError';
}

/** True when `err` is, or wraps (via `cause`), a {@link TerminalError}. */
export function isTerminal(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

/**
 * True when `err` is a panic: a thrown non-Error value, a {@link PanicError}, or what the engine throws for a bug
 * — a `TypeError` (reading a property of undefined, calling a non-function), `ReferenceError` or `RangeError`
 * (stack overflow, invalid array length) — the equivalents of the Go runtime panics controller-runtime recovers
 * (nil dereference, index out of range). One of those with a `cause` was built by a library to report a failure
 * (undici's `fetch failed`), not thrown by the engine: an ordinary error.
 */
export function isPanic(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof PanicError) return true;
  return (
    (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError) && err.cause === undefined
  );
}

/** The reason of a reconcile's `signal` when the controller's reconciliation timeout fired. */
export class ReconcileTimeoutError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_RECONCILE_TIMEOUT';
  override name = 'ReconcileTimeoutError';
}

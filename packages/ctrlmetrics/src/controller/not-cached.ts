/** The error of a read of a kind a controller's cache does not hold (its own module: the informers raise it too). */
import { CtrlmetricsError } from '../util/errors.js';

/**
 * A read of a kind the cache does not hold (controller-runtime's `ErrResourceNotCached`): not a not-found, which
 * would say the object was deleted. Read it with `ctx.client` or `ctx.apiReader` (from the API), or watch it.
 */
export class NotCachedError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_NOT_CACHED';
  override name = 'NotCachedError';
}

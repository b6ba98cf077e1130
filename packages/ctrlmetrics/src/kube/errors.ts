/**
 * What an API error means, as apimachinery's `apierrors` says it: `isNotFound`, `isConflict`, … on the
 * {@link KubeApiError} a call threw, and `ignoreNotFound` for the usual `.catch(ignoreNotFound)`. A transport
 * failure (status 0) is none of these.
 */
import { KubeApiError } from './client.js';

/** The Status reasons apimachinery knows; an answer with another reason (or none) is judged by its HTTP code. */
const KNOWN_REASONS = new Set([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
]);

function hasStatus(err: unknown, status: number, reason: string): boolean {
  if (!(err instanceof KubeApiError) || err.status === 0) return false;
  if (err.reason === reason) return true;
  return !KNOWN_REASONS.has(err.reason) && err.status === status;
}

/** The object (or its type) does not exist: 404 NotFound. */
export function isNotFound(err: unknown): boolean {
  return hasStatus(err, 404, 'NotFound');
}

/** A write lost a race (stale `resourceVersion`, or an apply conflict): 409 Conflict. Re-read and retry. */
export function isConflict(err: unknown): boolean {
  return hasStatus(err, 409, 'Conflict');
}

/** A create found the name taken: 409 AlreadyExists. */
export function isAlreadyExists(err: unknown): boolean {
  return hasStatus(err, 409, 'AlreadyExists');
}

/** The identity may not do this: 403 Forbidden (RBAC, or a namespace being terminated). */
export function isForbidden(err: unknown): boolean {
  return hasStatus(err, 403, 'Forbidden');
}

/** The object failed validation: 422 Invalid (the causes are in `err.body.details.causes`). */
export function isInvalid(err: unknown): boolean {
  return hasStatus(err, 422, 'Invalid');
}

/** The credentials were refused: 401 Unauthorized. */
export function isUnauthorized(err: unknown): boolean {
  return hasStatus(err, 401, 'Unauthorized');
}

/**
 * Swallows a NotFound and rethrows anything else: `await client.get(path).catch(ignoreNotFound)` is the object or
 * undefined.
 */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

/** Swallows an AlreadyExists and rethrows anything else. */
export function ignoreAlreadyExists(err: unknown): undefined {
  if (isAlreadyExists(err)) return undefined;
  throw err;
}

/**
 * The service-account issuer's discovery documents (`/.well-known/openid-configuration` and `/openid/v1/jwks`),
 * answered as kube-apiserver answers them, because clients that work against the authority must work against a
 * cluster too:
 * - each document has one representation: the configuration is `application/json`, the key set
 *   `application/jwk-set+json`. An `Accept` that admits neither that exact type nor `*\/*` gets 406 NotAcceptable
 *   naming the representation (`application/json` alone is refused for the key set; `application/*` is refused
 *   for both, as the real server's negotiation matches whole types only);
 * - GET only: HEAD and every other method get 405;
 * - a 200 may be cached for an hour (`Cache-Control: public, max-age=3600`); errors are `no-cache, private`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, methodNotAllowed } from './status.js';

/** What the discovery documents are made of. */
export interface IssuerDiscoverySource {
  /** The `iss` claim of the tokens. */
  issuer: string;
  /** `host:port` the key set is reachable at (the `jwks_uri`). */
  serverAddress(): string;
  /** The public signing keys, as JWKs. */
  keys(): Record<string, unknown>[];
  /** The tokens' signature algorithm. */
  algorithm: string;
}

const CONFIGURATION_PATH = '/.well-known/openid-configuration';
const JWKS_PATH = '/openid/v1/jwks';

/**
 * Whether `accept` admits `type`: an absent or empty header admits anything; otherwise one of its media ranges,
 * parameters (and so `q`) aside, must be the type itself or `*\/*`.
 */
export function admits(accept: string | undefined, type: string): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const t = range.split(';', 1)[0].trim().toLowerCase();
    return t === '*/*' || t === type;
  });
}

/** 406 as kube-apiserver words it for a document with one representation. */
export function notAcceptable(type: string): ApiError {
  return new ApiError(406, 'NotAcceptable', `406: Not Acceptable\n\nAvailable representations: ${type}`, {});
}

/**
 * Answers `path` if it is one of the issuer discovery documents and returns true; returns false for any other
 * path. Throws {@link ApiError} (405, 406) for a request the real server refuses.
 */
export function serveIssuerDiscovery(
  src: IssuerDiscoverySource,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  let contentType: string;
  let body: () => unknown;
  if (path === CONFIGURATION_PATH) {
    contentType = 'application/json';
    body = () => ({
      issuer: src.issuer,
      jwks_uri: `https://${src.serverAddress()}${JWKS_PATH}`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [src.algorithm],
    });
  } else if (path === JWKS_PATH) {
    contentType = 'application/jwk-set+json';
    body = () => ({ keys: src.keys() });
  } else {
    return false;
  }
  if (req.method !== 'GET') throw methodNotAllowed();
  if (!admits(req.headers.accept, contentType)) throw notAcceptable(contentType);
  const text = JSON.stringify(body());
  res.writeHead(200, {
    'Content-Type': contentType,
    'Cache-Control': 'public, max-age=3600',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
  return true;
}

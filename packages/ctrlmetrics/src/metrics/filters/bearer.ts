/**
 * Extracts the bearer token from a request's `Authorization` headers.
 *
 * Stricter than k8s.io/apiserver's parser: exactly one `Authorization` header, the scheme `Bearer`
 * (any case), one run of spaces, then one token of visible ASCII characters and nothing after it.
 * Only HTTP's optional whitespace (SP, HTAB) around the value is ignored: other whitespace (NBSP, VT, FF, ...)
 * is part of the value, so `Bearer <token><NBSP>` is refused.
 * Anything else is "no token" and the filter answers 401.
 */

/** Longest token accepted (service-account JWTs are ~1 KB; the server's header limit is 16 KiB). */
export const MAX_TOKEN_LENGTH = 8192;

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** RFC 9110's OWS around a field value; String#trim would also strip NBSP, VT, FF, U+2028, BOM, ... */
const OPTIONAL_WHITESPACE = /^[ \t]+|[ \t]+$/g;

/** Every `Authorization` value of a request, from its raw header list (duplicates are not merged). */
export function authorizationValues(rawHeaders: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'authorization') out.push(rawHeaders[i + 1]);
  }
  return out;
}

/** The bearer token of the given `Authorization` values, or undefined when there is not exactly one valid one. */
export function parseBearerToken(values: readonly string[]): string | undefined {
  if (values.length !== 1) return undefined;
  const value = values[0].replace(OPTIONAL_WHITESPACE, '');
  const sp = value.indexOf(' ');
  if (sp < 0) return undefined;
  if (value.slice(0, sp).toLowerCase() !== 'bearer') return undefined;
  const token = value.slice(sp + 1).replace(/^ +/, '');
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !VISIBLE_ASCII.test(token)) return undefined;
  return token;
}

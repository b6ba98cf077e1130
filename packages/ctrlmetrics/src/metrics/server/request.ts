/**
 * What the server decides about a request before routing it: its target in origin form, and what happens to a
 * body nobody asked for.
 *
 * - Absolute-form targets (`GET https://host:8443/metrics HTTP/1.1`, which RFC 9112 §3.2.2 requires a server to
 *   accept) are rewritten to origin form (`/metrics`), so routing, the filter's SubjectAccessReview and the
 *   handlers see one path. The URL's authority is dropped: it is trusted for nothing.
 * - The metrics server is no upload endpoint: a body declared larger than {@link MAX_BODY_BYTES} is refused with
 *   413 before any authentication work, and a request that carries a body of any size has its connection closed
 *   after the answer, so an unread body (e.g. of an unauthenticated caller) is never drained to the end.
 *   `Expect: 100-continue` is not answered before authentication (the server registers `checkContinue`); the
 *   filter sends `100 Continue` only to an authorized caller.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/** Largest request body the server accepts (a scrape has none; extra handlers get a few KiB). */
export const MAX_BODY_BYTES = 4 * 1024;

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** Rewrites an absolute-form target to origin form (`https://h:1/p?q` → `/p?q`, `https://h:1` → `/`). */
export function toOriginForm(url: string): string {
  const m = ABSOLUTE_FORM.exec(url);
  if (!m) return url;
  const rest = url.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The path of an origin-form target (without the query). */
export function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
}

/** What the request says about its body: none, a declared length, or unknown (chunked, or HTTP/2 DATA to come). */
export function declaredBody(req: Req): { present: boolean; length?: number } {
  const cl = req.headers['content-length'];
  if (req.httpVersionMajor >= 2) {
    const stream = (req as Http2ServerRequest).stream;
    if (stream?.endAfterHeaders) return { present: false };
    return { present: true, length: cl !== undefined ? Number(cl) : undefined };
  }
  if (req.headers['transfer-encoding'] !== undefined) return { present: true };
  if (cl !== undefined) {
    const n = Number(cl);
    return { present: n !== 0, length: n };
  }
  return { present: false };
}

/** HTTP/2's CANCEL error code (RFC 9113 §7); a literal so that HTTP/1-only servers do not load `node:http2` (≈1.8 MB on Node 20). */
const HTTP2_CANCEL = 0x8;

/** Closes the connection (HTTP/1) or cancels the stream (HTTP/2) once the answer is sent, instead of reading the rest of the body. */
export function closeAfterAnswer(req: Req, res: Res): void {
  if (req.httpVersionMajor >= 2) {
    res.once('finish', () => {
      const stream = (req as Http2ServerRequest).stream;
      if (stream && !stream.destroyed && !stream.readableEnded) stream.close(HTTP2_CANCEL);
    });
    return;
  }
  const r = res as ServerResponse;
  r.shouldKeepAlive = false;
  r.setHeader('Connection', 'close');
}

/** Whether the caller waits for `100 Continue` before sending its body. */
export function expectsContinue(req: Req): boolean {
  const e = req.headers.expect;
  return typeof e === 'string' && e.toLowerCase() === '100-continue';
}

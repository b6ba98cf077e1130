/**
 * A plain-HTTP request on an HTTPS port gets Go's answer (net/http: `400 Bad Request`, "Client sent an HTTP
 * request to an HTTPS server.", as the Go metrics endpoint and kube-apiserver give) instead of a silently closed
 * connection, so `curl http://…:8443/metrics` says what is wrong. Used by the metrics server and the authority.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

const ANSWER = 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';

/**
 * A `tlsClientError` listener. OpenSSL recognises an HTTP request line where a TLS record should start
 * (`ERR_SSL_HTTP_REQUEST`); the answer is written on the TCP socket under the TLS socket (Node keeps it as
 * `_parent`, not in its typings). Other handshake failures close the connection as before.
 */
export function answerPlainHttp(err: Error & { code?: string }, tlsSocket: TLSSocket): void {
  if (err.code !== 'ERR_SSL_HTTP_REQUEST') return;
  const raw = (tlsSocket as TLSSocket & { _parent?: Socket })._parent;
  if (!raw || raw.destroyed || !raw.writable) return;
  raw.end(ANSWER);
  // never keep a socket open on a client that ignores the answer
  raw.setTimeout(5_000, () => raw.destroy());
}

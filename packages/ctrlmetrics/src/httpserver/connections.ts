/**
 * Graceful draining for the metrics server, the same for plain HTTP, HTTPS and HTTP/2 (with HTTP/1.1 fallback):
 * on {@link ConnectionTracker.drain}, idle HTTP/1 connections are closed at once, busy ones after their last
 * response (sent with `Connection: close`), and HTTP/2 sessions get a GOAWAY and close when their streams are
 * done. {@link ConnectionTracker.destroyAll} cuts whatever is still open when the deadline passes.
 */
import type { Server as NetServer, Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse, ServerHttp2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';

export class ConnectionTracker {
  /** Every TCP connection (also those still in the TLS handshake): what {@link destroyAll} cuts. */
  private readonly raw = new Set<Socket>();
  /** HTTP-level connections (the TLS socket when secure) → HTTP/1 requests in flight. */
  private readonly conns = new Map<Socket, number>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private draining = false;

  constructor(server: NetServer, secure: boolean) {
    server.on('connection', (s: Socket) => {
      this.raw.add(s);
      s.once('close', () => this.raw.delete(s));
      if (!secure) this.addConn(s);
    });
    if (secure) server.on('secureConnection', (s: TLSSocket) => this.addConn(s));
    server.on('session', (session: ServerHttp2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
      if (this.draining) session.close();
    });
  }

  private addConn(s: Socket): void {
    this.conns.set(s, 0);
    s.once('close', () => this.conns.delete(s));
    if (this.draining && !isHttp2(s)) s.end();
  }

  /** Counts an HTTP/1 request until its response is done. Call first thing for every request. */
  track(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
    if (req.httpVersionMajor >= 2) return;
    const s = req.socket;
    this.conns.set(s, (this.conns.get(s) ?? 0) + 1);
    if (this.draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      const left = (this.conns.get(s) ?? 1) - 1;
      if (!this.conns.has(s)) return;
      this.conns.set(s, left);
      if (left === 0 && this.draining) s.end();
    });
  }

  /** Starts closing every connection as soon as it has nothing in flight. */
  drain(): void {
    this.draining = true;
    for (const session of this.sessions) session.close();
    for (const [s, inflight] of this.conns) if (inflight === 0 && !isHttp2(s)) s.end();
  }

  /** Cuts every connection now. */
  destroyAll(): void {
    for (const session of this.sessions) session.destroy();
    for (const s of this.raw) s.destroy();
    for (const s of this.conns.keys()) s.destroy();
  }
}

function isHttp2(s: Socket): boolean {
  return (s as TLSSocket).alpnProtocol === 'h2';
}

/**
 * Closes `server` gracefully: stops accepting, drains the tracked connections, and past `timeoutMs` cuts what is
 * still open. Resolves true when the deadline had to cut connections.
 */
export async function closeGracefully(
  server: NetServer,
  tracker: ConnectionTracker | undefined,
  timeoutMs: number,
): Promise<boolean> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  tracker?.drain();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    tracker?.destroyAll();
    await closed;
  }
  return timedOut;
}

/** `scheme://host:port` of a bound address (the wildcard addresses as loopback, IPv6 in brackets). */
export function boundUrl(a: { address: string; family: string; port: number }, scheme: 'http' | 'https'): string {
  const host =
    a.family === 'IPv6'
      ? `[${a.address === '::' ? '::1' : a.address}]`
      : a.address === '0.0.0.0'
        ? '127.0.0.1'
        : a.address;
  return `${scheme}://${host}:${a.port}`;
}

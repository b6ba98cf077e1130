/**
 * Bounds on connections that hold a slot without doing work, the same in HTTP/1.1 mode, HTTP/2 mode and HTTP/2's
 * HTTP/1.1 fallback (which has no head timeout of Node's own):
 *
 * - A connection that has not started a request (TLS handshake done and a complete request head, or an HTTP/2
 *   stream) within `headTimeoutMs` of opening is closed: idle TLS connections and slow-header clients alike.
 *   Between requests the same holds with `idleTimeoutMs`, counted from the end of the last one and not reset by
 *   bytes that do not complete a request (a next head trickled a byte at a time on a keep-alive connection).
 * - At `maxConnections`, a new connection does not get refused: the oldest connection with no request in flight
 *   is closed to make room — first those that never started a request, then idle keep-alive ones. A client
 *   holding many idle connections thus cannot lock out a scraper (Node's own `maxConnections` refuses the
 *   newest connection, which is exactly the scraper's). Only when every connection is busy is the new one refused.
 *
 * Connections are keyed by their remote address and port, which the raw socket, its TLS socket and an HTTP/2
 * session's socket share.
 */
import type { Server as NetServer, Socket } from 'node:net';

export interface ConnectionGuardOptions {
  maxConnections: number;
  headTimeoutMs: number;
  idleTimeoutMs: number;
}

interface Conn {
  socket: Socket;
  /** Requests (HTTP/1) or streams (HTTP/2) in flight. */
  inFlight: number;
  /** Whether a request has started on it. */
  started: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Counts of what the guard did (for tests and diagnostics). */
export interface ConnectionGuardStats {
  open: number;
  headTimeouts: number;
  idleTimeouts: number;
  evicted: number;
  refused: number;
}

function keyOf(s: { remoteAddress?: string; remotePort?: number }): string | undefined {
  return s.remoteAddress === undefined || s.remotePort === undefined ? undefined : `${s.remoteAddress}|${s.remotePort}`;
}

export class ConnectionGuard {
  /** In opening order: the first entries are the oldest. */
  private readonly conns = new Map<string, Conn>();
  private headTimeouts = 0;
  private idleTimeouts = 0;
  private evicted = 0;
  private refused = 0;

  constructor(
    server: NetServer,
    private readonly o: ConnectionGuardOptions,
  ) {
    server.on('connection', (socket: Socket) => this.opened(socket));
  }

  stats(): ConnectionGuardStats {
    return {
      open: this.conns.size,
      headTimeouts: this.headTimeouts,
      idleTimeouts: this.idleTimeouts,
      evicted: this.evicted,
      refused: this.refused,
    };
  }

  private opened(socket: Socket): void {
    const key = keyOf(socket);
    if (key === undefined) {
      socket.destroy();
      return;
    }
    if (this.conns.size >= this.o.maxConnections && !this.evictOne()) {
      this.refused++;
      socket.destroy();
      return;
    }
    const conn: Conn = { socket, inFlight: 0, started: false, timer: undefined };
    conn.timer = setTimeout(() => {
      if (conn.started) return;
      this.headTimeouts++;
      socket.destroy();
    }, this.o.headTimeoutMs);
    conn.timer.unref();
    this.conns.set(key, conn);
    socket.once('close', () => {
      clearTimeout(conn.timer);
      if (this.conns.get(key) === conn) this.conns.delete(key);
    });
  }

  /** Closes the oldest connection that never started a request, else the oldest idle one. */
  private evictOne(): boolean {
    let idle: Conn | undefined;
    for (const conn of this.conns.values()) {
      if (conn.inFlight > 0) continue;
      if (!conn.started) {
        this.evict(conn);
        return true;
      }
      idle ??= conn;
    }
    if (!idle) return false;
    this.evict(idle);
    return true;
  }

  private evict(conn: Conn): void {
    this.evicted++;
    const key = keyOf(conn.socket);
    if (key !== undefined) this.conns.delete(key);
    conn.socket.destroy();
  }

  /**
   * Marks a request (HTTP/1) or stream (HTTP/2) as started on the connection of `socket`; returns the function
   * to call when it is done.
   */
  requestStarted(socket: { remoteAddress?: string; remotePort?: number }): () => void {
    const key = keyOf(socket);
    const conn = key === undefined ? undefined : this.conns.get(key);
    if (!conn) return () => undefined;
    conn.started = true;
    clearTimeout(conn.timer);
    conn.inFlight++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      conn.inFlight--;
      if (conn.inFlight > 0 || conn.socket.destroyed) return;
      conn.timer = setTimeout(() => {
        if (conn.inFlight > 0) return;
        this.idleTimeouts++;
        conn.socket.destroy();
      }, this.o.idleTimeoutMs);
      conn.timer.unref();
    };
  }
}

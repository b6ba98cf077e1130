// Raw HTTPS calls to the authority for its tests: real TLS verified against the authority's CA, no project client.
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';

export type Obj = Record<string, any>;

/** A finished response: status, headers and the body (parsed JSON when it is JSON, else the text). */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Obj;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Raw body (sent as is). */
  raw?: Buffer | string;
  contentType?: string;
  headers?: Record<string, string | string[]>;
  timeoutMs?: number;
}

/** Calls the authority at `base` (its URL) trusting `ca`; every call is bounded by `timeoutMs` (default 10 s). */
export function call(base: string, ca: string, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const u = new URL(path, base);
  const payload = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  const headers: Record<string, string | string[]> = { Accept: 'application/json', ...(o.headers ?? {}) };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  if (payload !== undefined) {
    headers['Content-Type'] = o.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        ca,
        headers,
        agent: false,
        timeout: o.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Obj;
          try {
            body = text ? (JSON.parse(text) as Obj) : {};
          } catch {
            body = {};
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${o.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A running watch: collected events and a way to wait for them. */
export interface WatchStream {
  status: number;
  events: Obj[];
  /** Resolves once `n` events arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Obj[]>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens a watch (GET with `watch=1` already in `path`) and collects its newline-delimited events. */
export function watch(base: string, ca: string, path: string, token: string): Promise<WatchStream> {
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'GET',
        ca,
        agent: false,
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      },
      (res) => {
        const events: Obj[] = [];
        const waiters: Array<() => void> = [];
        let buf = '';
        let endResolve: () => void = () => undefined;
        const ended = new Promise<void>((r) => (endResolve = r));
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line) events.push(JSON.parse(line) as Obj);
          }
          for (const w of waiters.splice(0)) w();
        });
        res.on('end', () => endResolve());
        res.on('close', () => endResolve());
        res.on('error', () => endResolve());
        resolve({
          status: res.statusCode ?? 0,
          events,
          ended,
          close: () => req.destroy(),
          waitFor(n, timeoutMs = 5000) {
            return new Promise((ok, fail) => {
              const t = setTimeout(
                () => fail(new Error(`watch ${path}: ${events.length} of ${n} events within ${timeoutMs} ms`)),
                timeoutMs,
              );
              const check = () => {
                if (events.length >= n) {
                  clearTimeout(t);
                  ok(events);
                } else waiters.push(check);
              };
              check();
            });
          },
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', reject);
    req.end();
  });
}

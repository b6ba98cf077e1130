/**
 * A small fault-injecting HTTPS proxy to put between a client and the embedded authority: it forwards requests
 * unchanged, or answers them with a fault (status, malformed JSON, delay, reset), or stops listening entirely
 * ("authority down") and comes back on the same port. It counts the requests it receives per path.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { generateCA, issueServingCert } from '../../packages/envtest/src/pki.js';

/** What the proxy does with the next requests. */
export type Fault =
  | { kind: 'pass' }
  | { kind: 'status'; status: number; retryAfter?: number }
  | { kind: 'malformed' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'reset' }
  /** Alternates: odd-numbered requests get `status`, even ones pass. */
  | { kind: 'flap'; status: number };

export class FaultProxy {
  private server: https.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private fault: Fault = { kind: 'pass' };
  private seq = 0;
  private upstreamAgent: https.Agent;
  /** Requests received, by path. */
  readonly counts = new Map<string, number>();
  /** Every request's method and URL (path and query), in order. */
  readonly requests: string[] = [];
  /** When set, the fault applies only to requests whose URL contains this; others pass. */
  private faultOnly: string | undefined;
  port = 0;
  caPem = '';
  private cert = { certPem: '', keyPem: '' };

  constructor(
    private upstream: string,
    upstreamCa: string,
  ) {
    this.upstreamAgent = new https.Agent({ keepAlive: true, ca: upstreamCa, maxSockets: 64 });
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Requests whose path contains `fragment`. */
  count(fragment: string): number {
    let n = 0;
    for (const [p, c] of this.counts) if (p.includes(fragment)) n += c;
    return n;
  }

  /** The fault for the next requests; `onlyUrlsContaining` limits it to those (e.g. `watch=1`). */
  setFault(f: Fault, onlyUrlsContaining?: string): void {
    this.fault = f;
    this.faultOnly = onlyUrlsContaining;
    this.seq = 0;
  }

  async start(): Promise<void> {
    if (!this.caPem) {
      const ca = await generateCA('fault-proxy-ca');
      this.caPem = ca.certPem;
      this.cert = await issueServingCert(ca, ['127.0.0.1', 'localhost']);
    }
    await this.listen();
  }

  private listen(): Promise<void> {
    const server = https.createServer({ cert: this.cert.certPem, key: this.cert.keyPem }, (req, res) =>
      this.handle(req, res),
    );
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('tlsClientError', () => undefined);
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        this.port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** "Authority down": closes the listener and every connection (new connections are refused). */
  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      for (const sock of this.sockets) sock.destroy();
    });
  }

  /** Forwards to another upstream from now on (an API server restarted on another port, same CA). */
  retarget(upstream: string): void {
    this.upstream = upstream;
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (!this.server) await this.listen();
  }

  async stop(): Promise<void> {
    await this.down();
    this.upstreamAgent.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
    if (this.requests.length < 10_000) this.requests.push(`${req.method} ${req.url ?? '/'}`);
    const f: Fault =
      this.faultOnly === undefined || (req.url ?? '').includes(this.faultOnly) ? this.fault : { kind: 'pass' };
    const n = ++this.seq;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      switch (f.kind) {
        case 'pass':
          return this.forward(req, body, res);
        case 'status':
          return this.fail(res, f.status, f.retryAfter);
        case 'flap':
          return n % 2 === 1 ? this.fail(res, f.status) : this.forward(req, body, res);
        case 'malformed':
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end('{"kind":"TokenReview","status":{"authenticated":tr');
          return;
        case 'reset':
          req.socket.destroy();
          return;
        case 'slow': {
          const t = setTimeout(() => {
            this.timers.delete(t);
            this.forward(req, body, res);
          }, f.delayMs);
          this.timers.add(t);
          return;
        }
      }
    });
  }

  private fail(res: ServerResponse, status: number, retryAfter?: number): void {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    res.writeHead(status, headers);
    res.end(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'injected fault', code: status }),
    );
  }

  private forward(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const u = new URL(req.url ?? '/', this.upstream);
    const headers = { ...req.headers, host: u.host };
    delete headers.connection;
    const up = https.request(u, { method: req.method, headers, agent: this.upstreamAgent }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    up.end(body);
  }
}

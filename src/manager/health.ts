/**
 * The health probe server: `/healthz` (liveness) and `/readyz` (readiness) over plain HTTP, as controller-runtime
 * serves them on `--health-probe-bind-address`. Each endpoint runs its named checks: 200 `ok` when all pass,
 * 500 listing the failed ones otherwise; `?verbose` lists every check; `/healthz/<name>` runs one check.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseBindAddress } from '../util/bind-address.js';

/** A check: resolve/return to pass, throw (or return an Error) to fail with that message. */
export type HealthCheck = () => void | Error | Promise<void | Error>;

/** Named checks of one endpoint. */
export class CheckSet {
  readonly checks = new Map<string, HealthCheck>();

  /** Adds (or replaces) the check of that name. */
  add(name: string, check: HealthCheck): void {
    if (!/^[a-zA-Z0-9_.-]+$/.test(name)) throw new Error(`invalid health check name ${JSON.stringify(name)}`);
    if (this.checks.has(name)) throw new Error(`health check ${name} is already registered`);
    this.checks.set(name, check);
  }

  /** Runs every check (or the one named); returns [name, error message or undefined]. */
  async run(only?: string): Promise<Array<[string, string | undefined]>> {
    const entries = [...this.checks.entries()].filter(([n]) => only === undefined || n === only);
    return Promise.all(
      entries.map(async ([name, check]): Promise<[string, string | undefined]> => {
        try {
          const r = await check();
          return [name, r instanceof Error ? r.message : undefined];
        } catch (err) {
          return [name, err instanceof Error ? err.message : String(err)];
        }
      }),
    );
  }
}

/** The probe server. */
export class HealthProbeServer {
  readonly healthz = new CheckSet();
  readonly readyz = new CheckSet();
  private server: http.Server | undefined;

  constructor(readonly bindAddress: string) {}

  /** The bound port (after start). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** `http://host:port` (after start). */
  get url(): string {
    const a = this.server?.address() as AddressInfo | null;
    if (!a) return '';
    const host = a.family === 'IPv6' ? `[${a.address === '::' ? '::1' : a.address}]` : a.address === '0.0.0.0' ? '127.0.0.1' : a.address;
    return `http://${host}:${a.port}`;
  }

  /** Listens; rejects with a clear message when the address cannot be bound. */
  async start(): Promise<void> {
    const { host, port } = parseBindAddress(this.bindAddress);
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const why = err.code === 'EADDRINUSE' ? 'the address is already in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
        reject(new Error(`cannot bind the health probe server on ${this.bindAddress}: ${why}${err.code ? ` (${err.code})` : ''}`));
      });
      server.listen({ host, port }, () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and closes idle connections. */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeIdleConnections();
      setTimeout(() => s.closeAllConnections(), 2_000).unref();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://probe');
    const m = /^\/(healthz|readyz)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!m || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    const set = m[1] === 'healthz' ? this.healthz : this.readyz;
    const only = m[2];
    if (only !== undefined && !set.checks.has(only)) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`check ${only} not found\n`);
      return;
    }
    const results = await set.run(only);
    const failed = results.filter(([, e]) => e !== undefined);
    const verbose = url.searchParams.has('verbose');
    let body: string;
    if (failed.length === 0 && !verbose) body = 'ok';
    else {
      const lines = results
        .filter(([, e]) => verbose || e !== undefined)
        .map(([n, e]) => (e === undefined ? `[+]${n} ok` : `[-]${n} failed: ${e}`));
      body = lines.join('\n') + '\n' + (failed.length ? `${m[1]} check failed` : `${m[1]} check passed`);
    }
    res.writeHead(failed.length ? 500 : 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body + (body.endsWith('\n') ? '' : '\n'));
  }
}

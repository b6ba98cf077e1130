/**
 * The health probe server: `/healthz` (liveness) and `/readyz` (readiness) over plain HTTP, as controller-runtime
 * serves them on `--health-probe-bind-address`. Each endpoint runs its named checks: 200 `ok` when all pass,
 * 500 listing the failed ones otherwise; `?verbose` lists every check; `/healthz/<name>` runs one check.
 */
import type http from 'node:http';
import { HttpServer, ListenError, type ServerLimits } from '../httpserver/index.js';

/**
 * The probe server's bounds: a probe's head is a few hundred bytes and comes at once; the kubelet opens a connection
 * per probe, so an idle one is not kept long. Reachable by anything in the pod network: bounded like the others.
 */
const PROBE_LIMITS: Readonly<ServerLimits> = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  handshakeTimeoutMs: 10_000,
};
/** How long stopping waits for probes in flight. */
const STOP_TIMEOUT_MS = 2_000;

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
  private server: HttpServer | undefined;
  private readonly limits: Readonly<ServerLimits>;

  /**
   * @param bindAddress `host:port` to listen on (plain HTTP)
   * @param limits bounds other than the probe server's (tests)
   */
  constructor(
    readonly bindAddress: string,
    limits: Partial<ServerLimits> = {},
  ) {
    this.limits = { ...PROBE_LIMITS, ...limits };
  }

  /** The bound port (after start). */
  get port(): number {
    return this.server?.port ?? 0;
  }

  /** `http://host:port` (after start). */
  get url(): string {
    return this.server?.url ?? '';
  }

  /** Listens; rejects with a clear message when the address cannot be bound. */
  async start(): Promise<void> {
    const server = new HttpServer(
      { bindAddress: this.bindAddress, limits: this.limits },
      (req, res) => void this.handle(req as http.IncomingMessage, res as http.ServerResponse),
    );
    try {
      await server.listen();
    } catch (err) {
      if (!(err instanceof ListenError)) throw err;
      const code = err.systemCode;
      const why =
        code === 'EADDRINUSE' ? 'the address is already in use' : code === 'EACCES' ? 'permission denied' : err.message;
      throw new Error(`cannot bind the health probe server on ${this.bindAddress}: ${why}${code ? ` (${code})` : ''}`, {
        cause: err,
      });
    }
    this.server = server;
  }

  /** Stops listening; probes in flight get 2 s to finish. */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await s.close(STOP_TIMEOUT_MS);
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

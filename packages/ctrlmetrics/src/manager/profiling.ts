/**
 * Profiles of a running manager (controller-runtime's `PprofBindAddress`), through `node:inspector` in the
 * manager's own process, over plain HTTP on the server core:
 *
 * - `GET /debug/pprof/profile?seconds=N` (default 30, at most {@link MAX_PROFILE_SECONDS}): a V8 CPU profile of the
 *   next N seconds, a `.cpuprofile` that Chrome DevTools (Performance) and speedscope open;
 * - `GET /debug/pprof/heap`: a V8 heap snapshot, a `.heapsnapshot` for DevTools (Memory). Taking it pauses the
 *   process for as long as it takes to write (about a second per 100 MB of heap).
 *
 * One profile at a time: another request meanwhile gets 429. No authentication — as Go's pprof handlers — so the
 * server listens on loopback unless the address names a host: a heap snapshot holds every string in memory,
 * bearer tokens and keys included.
 */
import type { Session } from 'node:inspector';
import type { ServerResponse } from 'node:http';
import { HttpServer, type ServerRequest, type ServerResponseOf } from '../httpserver/index.js';
import { parseBindAddress } from '../util/bind-address.js';
import type { Logger } from '../util/log.js';

/** The longest CPU profile asked for in one request. */
export const MAX_PROFILE_SECONDS = 120;
const DEFAULT_PROFILE_SECONDS = 30;

/** The profiling server of a manager. */
export class ProfilingServer {
  private readonly server: HttpServer;
  private busy: string | undefined;
  /** The address it binds: the given one, on loopback when it names no host. */
  readonly bindAddress: string;

  constructor(
    bindAddress: string,
    private readonly log: Logger,
    private readonly timer: { setTimeout: typeof setTimeout; clearTimeout: typeof clearTimeout } = globalThis,
  ) {
    const { host, port } = parseBindAddress(bindAddress);
    this.bindAddress = host === undefined ? `127.0.0.1:${port}` : bindAddress;
    if (host !== undefined && !isLoopback(host)) {
      log.warn(
        'the profiling server listens beyond loopback: anyone who reaches it can take a heap snapshot, which holds the tokens and keys in memory',
        { bindAddress },
      );
    }
    // a profile's answer takes its N seconds: the request timeout counts the request only, not the answer
    this.server = new HttpServer(
      { bindAddress: this.bindAddress, limits: { maxConnections: 16, keepAliveTimeoutMs: 5_000 } },
      (req, res) => void this.handle(req, res as ServerResponse),
    );
  }

  /** `http://host:port` once listening. */
  get url(): string {
    return this.server.url;
  }

  /** Listens. */
  async start(): Promise<void> {
    await this.server.listen();
  }

  /** Stops listening; a profile in progress is cut. */
  async stop(): Promise<void> {
    await this.server.close(1_000);
  }

  private async handle(req: ServerRequest, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://profiling');
    const kind =
      url.pathname === '/debug/pprof/profile' ? 'cpu' : url.pathname === '/debug/pprof/heap' ? 'heap' : undefined;
    if (!kind)
      return text(
        res,
        404,
        '404 page not found: GET /debug/pprof/profile?seconds=N (CPU) or /debug/pprof/heap (heap snapshot)',
      );
    if (req.method !== 'GET') return text(res, 405, `${req.method} is not allowed: use GET`);
    let seconds = DEFAULT_PROFILE_SECONDS;
    if (kind === 'cpu' && url.searchParams.has('seconds')) {
      const raw = url.searchParams.get('seconds')!;
      seconds = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
      if (!(seconds >= 1 && seconds <= MAX_PROFILE_SECONDS))
        return text(
          res,
          400,
          `seconds must be a whole number from 1 to ${MAX_PROFILE_SECONDS} (got ${JSON.stringify(raw)})`,
        );
    }
    if (this.busy) {
      res.setHeader('Retry-After', '5');
      return text(res, 429, `a ${this.busy} profile is being taken: one at a time, try again when it is done`);
    }
    this.busy = kind;
    let session: Session | undefined;
    try {
      // loaded with the first profile: node:inspector costs a manager that never profiles ≈ 1.6 MB and 2 ms at start
      const { Session } = await import('node:inspector');
      session = new Session();
      session.connect();
      if (kind === 'cpu') await this.cpuProfile(session, seconds, req, res);
      else await this.heapSnapshot(session, res);
    } catch (err) {
      this.log.error('profile failed', { kind, error: (err as Error).message });
      if (!res.headersSent) text(res, 500, `the profile failed: ${(err as Error).message}`);
      else res.destroy();
    } finally {
      session?.disconnect();
      this.busy = undefined;
    }
  }

  private async cpuProfile(session: Session, seconds: number, req: ServerRequest, res: ServerResponse): Promise<void> {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    this.log.info('taking a CPU profile', { seconds });
    // the client going away ends the profile early: nobody is left to read it
    await new Promise<void>((resolve) => {
      const t = this.timer.setTimeout(resolve, seconds * 1000);
      req.socket.once('close', () => {
        this.timer.clearTimeout(t);
        resolve();
      });
    });
    const { profile } = (await post(session, 'Profiler.stop')) as { profile: unknown };
    await post(session, 'Profiler.disable');
    if (res.destroyed) return;
    const body = JSON.stringify(profile);
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Disposition': `attachment; filename="cpu-${stamp()}.cpuprofile"`,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(body);
  }

  private async heapSnapshot(session: Session, res: ServerResponse): Promise<void> {
    this.log.info('taking a heap snapshot');
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Disposition': `attachment; filename="heap-${stamp()}.heapsnapshot"`,
      'X-Content-Type-Options': 'nosniff',
    });
    // the chunks come synchronously while the snapshot is written; the socket buffers them
    session.on('HeapProfiler.addHeapSnapshotChunk', (m) => res.write(m.params.chunk));
    await post(session, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    res.end();
  }
}

function post(session: Session, method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
  );
}

function text(res: ServerResponse | ServerResponseOf, status: number, body: string): void {
  (res as ServerResponse).writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
  });
  (res as ServerResponse).end(`${body}\n`);
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

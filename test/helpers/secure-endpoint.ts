/**
 * The secure metrics endpoint as a manager runs it (`createMetricsServer` + `filters.authenticationAndAuthorization`
 * + a {@link KubeClient} with the manager's defaults), on an ephemeral loopback port, plus small HTTPS clients:
 * `scrape` (one request on a fresh connection, never verifying the self-signed certificate) and `rawRequest`
 * (bytes written as given, for requests Node's HTTP client refuses to send).
 */
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import {
  Authenticator,
  authFilter,
  type AuthFilterOptions,
} from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import { reviewClient } from '../../packages/ctrlmetrics/src/metrics/filters/authn-authz.js';
import { createMetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import type { MetricsOptions, MetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/types.js';
import { createLogger } from '../../packages/ctrlmetrics/src/util/log.js';
import { within } from './process.js';

export interface SecureEndpoint {
  server: MetricsServer;
  client: KubeClient;
  port: number;
  url: string;
  /** The filter's decisions and their caches. */
  auth: Authenticator;
  stop(): Promise<void>;
}

/** Starts the endpoint; the manager identity is `restConfig` (e.g. through a {@link FaultProxy}). */
export async function startSecureEndpoint(
  restConfig: RestConfig,
  o: { filter?: AuthFilterOptions; metrics?: MetricsOptions } = {},
): Promise<SecureEndpoint> {
  const client = new KubeClient(restConfig);
  // what filters.authenticationAndAuthorization(o.filter) builds, with the Authenticator kept for the tests
  const reviews = reviewClient(restConfig, o.filter ?? {});
  const auth = new Authenticator(reviews, o.filter ?? {});
  const filterProvider = () => Object.assign(authFilter(auth), { close: () => reviews.close() });
  const server = createMetricsServer(
    { bindAddress: '127.0.0.1:0', filterProvider, shutdownTimeoutMs: 5_000, ...o.metrics },
    { restConfig, kubeClient: client, logger: createLogger('metrics-under-test') },
  );
  await server.start();
  return {
    server,
    client,
    port: server.port,
    url: server.url,
    auth,
    async stop() {
      await server.stop();
      client.close();
    },
  };
}

export interface ScrapeResult {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on a new connection (bounded by `timeoutMs`). Rejects on connection or TLS errors. */
export function scrape(
  port: number,
  o: {
    token?: string;
    path?: string;
    method?: string;
    headers?: Record<string, string>;
    timeoutMs?: number;
    agent?: https.Agent;
  } = {},
): Promise<ScrapeResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: o.path ?? '/metrics',
        method: o.method ?? 'GET',
        headers,
        rejectUnauthorized: false,
        agent: o.agent ?? false,
        timeout: o.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${o.timeoutMs ?? 15_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The raw response to bytes written on a fresh TLS connection: status (0 if none) and what was read — until the
 * first response is complete, or with `untilClose` until the server closes (pipelined requests).
 */
export function rawRequest(
  port: number,
  request: string | Buffer,
  timeoutMs = 15_000,
  untilClose = false,
): Promise<{ status: number; text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let done = false;
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () =>
      s.write(request),
    );
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(t);
      s.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text, closed });
    };
    const t = setTimeout(() => finish(false), timeoutMs);
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // one response is enough: stop once its body (Content-Length) is complete
      const head = text.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      if (!untilClose && head >= 0 && len && text.length >= head + 4 + Number(len[1])) finish(false);
    });
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
  });
}

/** One HTTP/2 request on an open session; resolves with the status and the whole body (bounded in time). */
export function h2Get(
  session: http2.ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<{ status: number; body: string }> {
  return within(
    new Promise((resolve, reject) => {
      const req = session.request({ ':path': path, ...headers });
      let status = 0;
      let body = '';
      req.on('response', (h) => (status = Number(h[':status'])));
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => resolve({ status, body }));
      req.on('error', reject);
      req.end();
    }),
    timeoutMs,
    `h2 ${path}`,
  );
}

/**
 * A scriptable admission webhook endpoint for testing the API server's side of webhook calls: a real HTTPS server
 * on 127.0.0.1 with a certificate of its own CA; each path answers with what the test scripts (an AdmissionReview
 * response built from the request, raw bytes, or nothing for a while), and every call is recorded.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { generateCA, issueServingCert, type CertKeyPair } from './certs.js';

/** What one call received. */
export interface ReceivedCall {
  path: string;
  /** Path and query as sent (`/mutate?timeout=10s`). */
  url: string;
  headers: IncomingHttpHeaders;
  review: AdmissionReview;
}

export type AdmissionReview = { apiVersion: string; kind: string; request: Record<string, any> };

/**
 * How a path answers: a response (uid filled in unless given), or a raw HTTP answer, after an optional delay; or
 * `drop`: the connection is closed without an answer.
 */
export type Script = (review: AdmissionReview) => {
  response?: Record<string, any>;
  raw?: { status: number; body: string };
  delayMs?: number;
  drop?: boolean;
};

/** A JSON patch as a webhook sends it (`patch` base64, `patchType`). */
export function jsonPatch(ops: unknown[]): { patch: string; patchType: 'JSONPatch' } {
  return { patch: Buffer.from(JSON.stringify(ops)).toString('base64'), patchType: 'JSONPatch' };
}

export class ScriptedWebhook {
  readonly calls: ReceivedCall[] = [];
  /** TLS connections accepted so far. */
  connections = 0;
  private readonly scripts = new Map<string, Script>();
  private server?: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  private constructor(
    readonly ca: CertKeyPair,
    private readonly serving: CertKeyPair,
  ) {}

  /** A webhook endpoint whose certificate names `hosts` (default 127.0.0.1). */
  static async start(hosts: string[] = ['127.0.0.1']): Promise<ScriptedWebhook> {
    const ca = await generateCA('scripted-webhook-ca');
    const w = new ScriptedWebhook(ca, await issueServingCert(ca, hosts));
    await w.listen();
    return w;
  }

  /** `caBundle` for the configurations: the CA, base64. */
  get caBundle(): string {
    return Buffer.from(this.ca.certPem).toString('base64');
  }

  /** `caBundle` holding the serving certificate itself (what envtest writes). */
  get leafBundle(): string {
    return Buffer.from(this.serving.certPem).toString('base64');
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  on(path: string, script: Script): void {
    this.scripts.set(path, script);
  }

  /** Calls received on a path. */
  callsTo(path: string): ReceivedCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  /** Serves (again, on the same port after {@link stop}); nothing when already serving. */
  async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer({ cert: this.serving.certPem, key: this.serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = req.url ?? '/';
        const path = url.split('?')[0];
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdmissionReview;
        this.calls.push({ path, url, headers: req.headers, review });
        const script = this.scripts.get(path);
        const answer = script ? script(review) : { response: { allowed: true } };
        if (answer.drop) {
          req.socket.destroy();
          return;
        }
        const reply = () => {
          if (res.destroyed) return;
          if (answer.raw) {
            res.writeHead(answer.raw.status, { 'Content-Type': 'application/json' }).end(answer.raw.body);
            return;
          }
          const body = {
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, ...answer.response },
          };
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        };
        if (!answer.delayMs) return reply();
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          reply();
        }, answer.delayMs);
        this.timers.add(timer);
      });
    });
    server.on('secureConnection', () => this.connections++);
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening (the port stays known: {@link listen} serves on it again). */
  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** Small clients for the metrics server tests: one HTTPS request, a TLS handshake probe, a bounded wait. */
import http from 'node:http';
import https from 'node:https';
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import tls from 'node:tls';
import { gunzipSync } from 'node:zlib';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body, gunzipped when `Content-Encoding: gzip`. */
  text: string;
}

export interface GetOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Verify the server against this CA (default: no verification, like `curl -k`). */
  ca?: string;
  servername?: string;
  /** Keep-alive agent to reuse a connection across requests. */
  agent?: http.Agent | https.Agent;
  timeoutMs?: number;
}

/** One request; resolves with the whole answer. Rejects on transport errors and after `timeoutMs` (default 10 s). */
export function request(url: string, opts: GetOptions = {}): Promise<Reply> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      {
        method: opts.method ?? 'GET',
        headers: opts.headers,
        agent: opts.agent ?? false,
        ca: opts.ca,
        servername: opts.servername,
        rejectUnauthorized: opts.ca !== undefined,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

export interface Handshake {
  ok: boolean;
  /** Error code when the handshake failed. */
  code?: string;
  alpn?: string | false | null;
  protocol?: string | null;
  fingerprint?: string;
  subjectAltName?: string;
}

/** Opens a TLS connection to 127.0.0.1:port with the given client options and reports the outcome. */
export function handshake(port: number, opts: tls.ConnectionOptions = {}): Promise<Handshake> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ ok: false, code: 'TIMEOUT' });
    }, 10_000);
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      clearTimeout(timer);
      const cert = s.getPeerCertificate();
      resolve({
        ok: true,
        alpn: s.alpnProtocol,
        protocol: s.getProtocol(),
        fingerprint: cert.fingerprint256,
        subjectAltName: cert.subjectaltname,
      });
      s.end();
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, code: err.code ?? err.message });
    });
  });
}

/** Polls `check` every `intervalMs` until it returns true; throws after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A directory laid out like a Kubernetes Secret volume: `tls.crt -> ..data/tls.crt`, `..data -> ..vN`,
 * updated the kubelet's way (new version directory, then an atomic rename of the `..data` symlink).
 */
export class SecretDir {
  private version = 0;
  constructor(readonly dir: string) {}

  async write(files: Record<string, string>): Promise<void> {
    const first = this.version === 0;
    const v = `..v${++this.version}`;
    await mkdir(join(this.dir, v), { recursive: true });
    for (const [name, content] of Object.entries(files))
      await writeFile(join(this.dir, v, name), content, { mode: 0o600 });
    const tmp = join(this.dir, '..data_tmp');
    await rm(tmp, { force: true });
    await symlink(v, tmp);
    const previous = first ? undefined : await readlink(join(this.dir, '..data'));
    await rename(tmp, join(this.dir, '..data'));
    if (first) for (const name of Object.keys(files)) await symlink(join('..data', name), join(this.dir, name));
    if (previous) await rm(join(this.dir, previous), { recursive: true, force: true });
  }
}

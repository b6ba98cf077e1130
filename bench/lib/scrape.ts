/** One scrape over HTTPS on loopback: response headers, wire bytes, decoded body. */
import { request } from 'node:https';
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ScrapeResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Bytes of the body as sent on the wire (compressed when gzip). */
  wireBytes: number;
  /** Decoded body. */
  body: string;
  ms: number;
}

/** GETs `url` with `headers`; rejects after `timeoutMs`. */
export function scrape(
  url: string,
  headers: Record<string, string>,
  ca: string,
  timeoutMs = 60_000,
): Promise<ScrapeResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'GET', headers, ca, agent: false, timeout: timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(parts);
        let body: string;
        try {
          body = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        } catch (e) {
          reject(e);
          return;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          wireBytes: raw.length,
          body,
          ms: performance.now() - started,
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`scrape of ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Sample lines of a text/OpenMetrics exposition: every non-empty line that is not a comment. */
export function countSampleLines(body: string): number {
  let n = 0;
  for (const line of body.split('\n')) if (line !== '' && !line.startsWith('#')) n++;
  return n;
}

/**
 * Polls until the server behind `url` accepts a TCP connection (closed at once, no TLS handshake, no request), or
 * the deadline passes. Readiness without a scrape, so that the RSS read next is the idle figure ("registry
 * with 10k series, no scrape"); the one-off checks scrape each server afterwards and fail the run on a non-200.
 */
export async function waitListening(url: string, timeoutMs: number, isAlive: () => boolean): Promise<void> {
  const { hostname, port } = new URL(url);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error(`server for ${url} exited before listening${last ? ` (${last})` : ''}`);
    try {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port) }, () => {
          socket.destroy();
          resolve();
        });
        socket.setTimeout(5_000, () => socket.destroy(new Error('connect timed out')));
        socket.on('error', reject);
      });
      return;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server for ${url} not listening within ${timeoutMs} ms: ${last}`);
}

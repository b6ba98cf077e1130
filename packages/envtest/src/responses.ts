/**
 * How the authority answers over HTTP, shared by the request handler (server.ts) and the verbs' handlers
 * (handlers/): JSON (indented for `?pretty` and curl), lists written a slice at a time, `Warning` headers, writes
 * answered once durable; and how it reads a request's body and write options.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { drainOrClose } from 'ctrlmetrics/internal';
import { ApiError, badRequest, internalError, unsupportedMediaType } from './status.js';
import { writeOptionsError } from './write-options.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf.js';
import type { KubeObject } from './types.js';
import type { ServerDeps } from './server-deps.js';

const MAX_BODY = 3 * 1024 * 1024;

/** Answers kube-apiserver indents: for `?pretty=true` and for curl, wget and probes (by User-Agent). */
export const prettyResponses = new WeakSet<ServerResponse>();

export function wantsPretty(req: IncomingMessage): boolean {
  const q = req.url?.includes('?') ? new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1)).get('pretty') : null;
  if (q !== null) return q === 'true' || q === '1';
  return /^(curl|Wget|kube-probe)/.test(req.headers['user-agent'] ?? '');
}

export function send(res: ServerResponse, code: number, body: unknown, head = false): void {
  const text = prettyResponses.has(res) ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(head ? undefined : text);
}

/** Objects serialised per slice of a large list answer (a few ms of work each). */
const LIST_SLICE = 500;

/**
 * Answers a list. A large one is written a slice at a time, yielding to other requests between slices and waiting
 * while the client is behind, so that one big list neither stalls the server nor piles up in memory.
 */
export async function sendList(
  res: ServerResponse,
  envelope: KubeObject,
  items: KubeObject[],
  present: (o: KubeObject) => KubeObject,
  head: boolean,
): Promise<void> {
  if (items.length <= LIST_SLICE) return send(res, 200, { ...envelope, items: items.map(present) }, head);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  if (head) {
    res.end();
    return;
  }
  res.write(JSON.stringify({ ...envelope, items: [] }).slice(0, -2)); // up to and with `"items":[`
  for (let i = 0; i < items.length; i += LIST_SLICE) {
    if (res.destroyed) return;
    const slice = items.slice(i, i + LIST_SLICE).map((o) => JSON.stringify(present(o)));
    if (res.write((i ? ',' : '') + slice.join(','))) await new Promise((r) => setImmediate(r));
    else await drainOrClose(res);
  }
  res.end(']}');
}

/** Sets kube-style `Warning` headers (e.g. unknown fields under fieldValidation=Warn). */
export function warn(res: ServerResponse, warnings: string[]): void {
  if (!warnings.length) return;
  // after any set earlier (a deprecated version's warning comes first)
  const before = res.getHeader('Warning');
  res.setHeader('Warning', [
    ...(Array.isArray(before) ? before : before === undefined ? [] : [String(before)]),
    ...warnings,
  ]);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  send(res, err.code, err.toStatus());
}

/**
 * Answers a write once it is on disk, as kube-apiserver answers once etcd has committed it; when it cannot be
 * made durable the client gets a 500 naming the cause instead.
 */
export async function sendWritten(
  d: Pick<ServerDeps, 'durable'>,
  res: ServerResponse,
  code: number,
  body: unknown,
  head = false,
): Promise<void> {
  if (d.durable) {
    try {
      await d.durable();
    } catch (err) {
      throw internalError((err as Error).message);
    }
  }
  send(res, code, body, head);
}

export function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

export function decodeBody(buf: Buffer, contentType: string): unknown {
  const ct = contentType.split(';')[0].trim().toLowerCase();
  if (ct === PROTOBUF_CONTENT_TYPE) return buf.length ? decodeProtobufObject(buf) : undefined;
  if (ct && !/(^|[/+])(json|yaml)$/.test(ct) && buf.length) throw unsupportedMediaType(ct);
  const text = buf.toString('utf8');
  if (!text.trim()) return undefined;
  try {
    if (ct.includes('yaml')) return parseYaml(text);
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body could not be decoded: ${(err as Error).message}`);
  }
}

/**
 * The manager a write's fields are recorded under: the `fieldManager` parameter, else the User-Agent up to its first
 * `/` (kubectl sends `kubectl-client-side-apply/v1.32…` for `kubectl apply`), else `unknown`; as kube-apiserver.
 */
export function writeManager(fieldManager: string | null, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0];
  // eslint-disable-next-line no-control-regex
  return prefix && prefix.length <= 128 && !/[\x00-\x1f\x7f]/.test(prefix) ? prefix : 'unknown';
}

/** Validates a write's query options as kube does, before the body is read. */
export function checkWriteOptions(
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  q: URLSearchParams,
  apply: boolean,
): void {
  const err = writeOptionsError({
    kind,
    dryRun: q.getAll('dryRun'),
    fieldManager: q.get('fieldManager'),
    fieldValidation: q.get('fieldValidation'),
    force: q.has('force'),
    apply,
  });
  if (err) throw err;
}

export function bool(v: string | null): boolean {
  return v === 'true' || v === '1';
}

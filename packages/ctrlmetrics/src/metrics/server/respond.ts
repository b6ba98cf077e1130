import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

/** Sends a short plain-text answer (like Go's `http.Error`: the message plus a newline). */
export function sendText(
  res: ServerResponse | Http2ServerResponse,
  status: number,
  message: string,
  extraHeaders?: Record<string, string>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(message + '\n');
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': String(body.length),
    ...extraHeaders,
  });
  res.end(body);
}

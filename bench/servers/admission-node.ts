/**
 * The floor of a Node admission server for the benchmark (bench/lib/admission.ts): `node:https` with the same
 * certificate, reading the body, parsing the AdmissionReview, answering the same JSON Patch — no routing, limits,
 * metrics or framework. What is left between it and ours is our cost; what it shares with Go's is the machine's.
 * Prints `WEBHOOK <port>` once serving. Environment: CERT_DIR.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.CERT_DIR!;
const patch = Buffer.from(
  JSON.stringify([{ op: 'add', path: '/spec/image', value: 'memcached:1.6.26-alpine3.19' }]),
).toString('base64');
const server = https.createServer(
  { cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')), minVersion: 'TLSv1.2' },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      const body = `${JSON.stringify({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', response: { uid: review.request.uid, allowed: true, status: { metadata: {}, code: 200 }, patch, patchType: 'JSONPatch' } })}\n`;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  },
);
server.listen(0, '127.0.0.1', () => process.stdout.write(`WEBHOOK ${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

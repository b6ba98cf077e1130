/**
 * The request floor of the controller benchmark (bench/lib/controller.ts): one JSON merge patch at a time to the
 * benchmark's ConfigMaps, through the library's `KubeClient.mergePatch` and through a bare `node:https` request
 * with the same headers and body (no rate limiter, metrics, deadline or decoding beyond JSON.parse), in blocks
 * alternated within this one process; prints one JSON line: this process's CPU per request in each block.
 * What the client adds to a request is the difference; what is left is Node's HTTP client and TLS.
 *
 * Run as transpiled JavaScript; the library is imported from CTRLMETRICS_LIB_ROOT (dist by default).
 * PATCH_LOOP_CONFIG: { restConfig, namespace, objects, perBlock, blocks, warmup }.
 */
import https from 'node:https';
import type * as Lib from '../../packages/ctrlmetrics/src/index.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root)
  throw new Error(
    'CTRLMETRICS_LIB_ROOT is not set (bench/servers/patch-loop.ts is started by bench/lib/controller.ts)',
  );
const { KubeClient } = (await import(`${root}index${ext}`)) as typeof Lib;

const cfg = JSON.parse(process.env.PATCH_LOOP_CONFIG ?? '{}') as {
  restConfig: Lib.RestConfig;
  namespace: string;
  objects: number;
  perBlock: number;
  blocks: number;
  warmup: number;
};
const rc = cfg.restConfig;
const server = new URL(rc.server);
const path = (i: number) => `/api/v1/namespaces/${cfg.namespace}/configmaps/cm-${i % cfg.objects}`;
const body = (i: number) => ({ metadata: { annotations: { 'bench/floor': String(i) } } });

const client = new KubeClient({ ...rc, qps: -1 });
const agent = new https.Agent({
  keepAlive: true,
  ca: rc.ca,
  cert: rc.cert,
  key: rc.key,
  rejectUnauthorized: !rc.insecureSkipTLSVerify,
});
const auth: Record<string, string> = rc.token ? { Authorization: `Bearer ${rc.token}` } : {};

const viaClient = (i: number) => client.mergePatch(path(i), body(i));
const bare = (i: number) =>
  new Promise<unknown>((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body(i)));
    const req = https.request(
      {
        hostname: server.hostname,
        port: server.port,
        path: path(i),
        method: 'PATCH',
        agent,
        headers: {
          Accept: 'application/json',
          'User-Agent': 'bench',
          'Content-Type': 'application/merge-patch+json',
          'Content-Length': String(payload.length),
          ...auth,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
            : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });

const ways = { client: viaClient, bare } as const;
const perRequestUs: Record<keyof typeof ways, number[]> = { client: [], bare: [] };
let i = 0;
// warm-up: until the JIT has compiled both paths (the first blocks of a cold process cost twice the later ones)
for (const way of Object.keys(ways) as Array<keyof typeof ways>)
  for (let n = 0; n < cfg.warmup; n++) await ways[way](i++);
for (let b = 0; b < cfg.blocks; b++) {
  const order: Array<keyof typeof ways> = b % 2 ? ['bare', 'client'] : ['client', 'bare'];
  for (const way of order) {
    const start = process.cpuUsage();
    for (let n = 0; n < cfg.perBlock; n++) await ways[way](i++);
    const used = process.cpuUsage(start);
    perRequestUs[way].push((used.user + used.system) / cfg.perBlock);
  }
}
process.stdout.write(`${JSON.stringify({ event: 'floor', perRequestUs })}\n`);
client.close();
agent.destroy();
process.exit(0);

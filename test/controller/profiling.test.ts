/**
 * Profiles of a running manager: `profilingBindAddress` serves a V8 CPU profile and a heap snapshot that parse, on
 * loopback unless told otherwise; one profile at a time (429), bad parameters 400.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { ProfilingServer } from '../../packages/ctrlmetrics/src/manager/index.js';
import { createLogger } from '../../packages/ctrlmetrics/src/util/log.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
});

function get(
  url: string,
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('a manager with profilingBindAddress serves a CPU profile and a heap snapshot that parse, on loopback', async () => {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    profilingBindAddress: ':0',
  });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    const base = mgr.profilingServer!.url;
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, 'an address without a host listens on loopback');
    // some work to be seen in the profile
    const busy = setInterval(() => JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ i }))), 5);
    const cpu = await get(`${base}/debug/pprof/profile?seconds=1`).finally(() => clearInterval(busy));
    assert.equal(cpu.status, 200);
    assert.match(String(cpu.headers['content-disposition']), /^attachment; filename="cpu-[\dTZ-]+\.cpuprofile"$/);
    const profile = JSON.parse(cpu.body) as {
      nodes: Array<{ id: number; callFrame: { functionName: string } }>;
      startTime: number;
      endTime: number;
      samples: number[];
      timeDeltas: number[];
    };
    assert.ok(
      profile.nodes.length > 1 &&
        profile.nodes.every((n) => typeof n.id === 'number' && typeof n.callFrame.functionName === 'string'),
    );
    assert.equal(profile.samples.length, profile.timeDeltas.length);
    assert.ok(profile.samples.length > 10, `${profile.samples.length} samples`);
    const µs = profile.endTime - profile.startTime;
    assert.ok(µs >= 900_000 && µs < 5_000_000, `profiled ${µs} µs`);

    const heap = await get(`${base}/debug/pprof/heap`);
    assert.equal(heap.status, 200);
    assert.match(String(heap.headers['content-disposition']), /\.heapsnapshot"$/);
    const snapshot = JSON.parse(heap.body) as {
      snapshot: { meta: { node_fields: string[] }; node_count: number };
      nodes: number[];
      strings: string[];
    };
    assert.ok(snapshot.snapshot.meta.node_fields.includes('name'));
    assert.ok(snapshot.snapshot.node_count > 1_000);
    assert.equal(snapshot.nodes.length, snapshot.snapshot.node_count * snapshot.snapshot.meta.node_fields.length);
    assert.ok(snapshot.strings.includes('ProfilingServer'), 'the snapshot names the classes in memory');
  } finally {
    stop.abort();
    await running;
  }
});

test('one profile at a time (429 with Retry-After); bad seconds 400; other paths 404, other methods 405', async () => {
  // the CPU profile's N seconds run on a timer the test fires
  let fire: (() => void) | undefined;
  let armed!: () => void;
  const profiling = new Promise<void>((resolve) => (armed = resolve));
  const timer = {
    setTimeout: ((fn: () => void) => {
      fire = fn;
      armed();
      return 1;
    }) as unknown as typeof setTimeout,
    clearTimeout: (() => undefined) as typeof clearTimeout,
  };
  const server = new ProfilingServer('127.0.0.1:0', createLogger('profiling-test'), timer);
  await server.start();
  try {
    const first = get(`${server.url}/debug/pprof/profile?seconds=120`);
    // the server arms the profile's timer once the request has arrived (bounded: a server that never does fails)
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([profiling, new Promise((r) => (bound = setTimeout(r, 10_000)))]);
    clearTimeout(bound);
    assert.ok(fire, 'the first profile is running');
    const second = await get(`${server.url}/debug/pprof/heap`);
    assert.equal(second.status, 429);
    assert.equal(second.headers['retry-after'], '5');
    assert.equal(second.body, 'a cpu profile is being taken: one at a time, try again when it is done\n');
    fire();
    const done = await first;
    assert.equal(done.status, 200);
    assert.ok(Array.isArray((JSON.parse(done.body) as { nodes: unknown[] }).nodes));

    for (const bad of ['0', '121', 'abc', '1.5', '']) {
      const r = await get(`${server.url}/debug/pprof/profile?seconds=${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.body, `seconds must be a whole number from 1 to 120 (got ${JSON.stringify(bad)})\n`);
    }
    assert.equal((await get(`${server.url}/debug/pprof/goroutine`)).status, 404);
    assert.equal((await get(`${server.url}/debug/pprof/heap`, 'POST')).status, 405);
  } finally {
    await server.stop();
  }
});

test('a profiling address beyond loopback is served as named, with a warning', async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const server = new ProfilingServer('0.0.0.0:0', createLogger('profiling-test'));
    assert.equal(server.bindAddress, '0.0.0.0:0');
    assert.ok(
      lines.some(
        (l) => l.includes('"level":"warn"') && l.includes('heap snapshot, which holds the tokens and keys in memory'),
      ),
    );
    assert.equal(new ProfilingServer(':8082', createLogger('profiling-test')).bindAddress, '127.0.0.1:8082');
  } finally {
    setLogSink(prev);
  }
});

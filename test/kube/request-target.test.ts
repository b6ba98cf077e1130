/**
 * What the client puts on the request line: the server's path prefix, the path as the caller wrote it, the query
 * encoded as a URL's search parameters (what the API server decodes), a path with characters a URL escapes escaped
 * and dot segments resolved, and the headers every request carries. Against a plain HTTP server on 127.0.0.1 that
 * records what it receives.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}
const seen: Seen[] = [];
let server: http.Server;
let port: number;
before(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind":"Status","status":"Success"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** The request line target of one call. */
async function targetOf(
  server: string,
  path: string,
  query?: Record<string, string | number | boolean | undefined>,
): Promise<Seen> {
  const client = new KubeClient({ server, token: 'token-1', userAgent: 'target-test' });
  try {
    seen.length = 0;
    await client.get(path, { query });
    assert.equal(seen.length, 1);
    return seen[0];
  } finally {
    client.close();
  }
}

test('a plain path goes as written, with the query encoded as search parameters', async () => {
  const got = await targetOf(`http://127.0.0.1:${port}`, '/api/v1/namespaces/a/configmaps', {
    labelSelector: 'app in (a,b),tier!=db',
    limit: 5,
    continue: undefined,
    watch: false,
  });
  assert.equal(
    got.url,
    '/api/v1/namespaces/a/configmaps?labelSelector=app+in+%28a%2Cb%29%2Ctier%21%3Ddb&limit=5&watch=false',
  );
  const params = new URL(got.url, 'http://x').searchParams;
  assert.equal(params.get('labelSelector'), 'app in (a,b),tier!=db');
  assert.equal(params.has('continue'), false, 'an undefined parameter is left out');
});

test('a query whose values are all undefined adds no question mark', async () => {
  assert.equal((await targetOf(`http://127.0.0.1:${port}`, '/api/v1/pods', { limit: undefined })).url, '/api/v1/pods');
});

test("the server's path prefix comes first, with or without its trailing slash", async () => {
  assert.equal((await targetOf(`http://127.0.0.1:${port}/prefix/`, '/api/v1/pods')).url, '/prefix/api/v1/pods');
  assert.equal(
    (await targetOf(`http://127.0.0.1:${port}/prefix`, '/api/v1/pods', { limit: 1 })).url,
    '/prefix/api/v1/pods?limit=1',
  );
});

test('percent escapes stay; characters a URL escapes are escaped; dot segments are resolved', async () => {
  assert.equal(
    (await targetOf(`http://127.0.0.1:${port}`, '/api/v1/namespaces/a%2Fb/pods')).url,
    '/api/v1/namespaces/a%2Fb/pods',
  );
  assert.equal(
    (await targetOf(`http://127.0.0.1:${port}`, '/api/v1/namespaces/a b/pods')).url,
    '/api/v1/namespaces/a%20b/pods',
  );
  assert.equal(
    (await targetOf(`http://127.0.0.1:${port}`, '/api/v1/namespaces/x/../pods')).url,
    '/api/v1/namespaces/pods',
  );
  assert.equal(
    (await targetOf(`http://127.0.0.1:${port}`, '/api/v1/./pods', { limit: 2 })).url,
    '/api/v1/pods?limit=2',
  );
});

test('every request carries Accept, User-Agent and the credentials; a body its type and length', async () => {
  const got = await targetOf(`http://127.0.0.1:${port}`, '/api/v1/pods');
  assert.equal(got.headers.accept, 'application/json');
  assert.equal(got.headers['user-agent'], 'target-test');
  assert.equal(got.headers.authorization, 'Bearer token-1');
  const client = new KubeClient({ server: `http://127.0.0.1:${port}`, token: 'token-1' });
  try {
    seen.length = 0;
    await client.request('PATCH', '/api/v1/namespaces/a/configmaps/b', {
      body: { data: { k: 'v' } },
      contentType: 'application/merge-patch+json',
      headers: { 'X-Extra': '1' },
    });
    await client.get('/api/v1/pods');
    const [patch, get] = seen;
    assert.equal(patch.method, 'PATCH');
    assert.equal(patch.headers['content-type'], 'application/merge-patch+json');
    assert.equal(patch.headers['content-length'], String(JSON.stringify({ data: { k: 'v' } }).length));
    assert.equal(patch.headers['x-extra'], '1');
    assert.equal(get.headers['x-extra'], undefined, "one call's headers do not stay for the next");
    assert.equal(get.headers['content-type'], undefined);
  } finally {
    client.close();
  }
});

test("create, replace and mergePatch send the caller's options with their body; an impersonated user on every request", async () => {
  const client = new KubeClient({ server: `http://127.0.0.1:${port}`, token: 'token-2', impersonateUser: 'jane' });
  try {
    seen.length = 0;
    const opts = { query: { dryRun: 'All' }, headers: { 'X-Extra': '2' } };
    await client.create('/api/v1/namespaces/a/configmaps', { metadata: { name: 'b' } }, opts);
    await client.replace('/api/v1/namespaces/a/configmaps/b', { metadata: { name: 'b' } }, opts);
    await client.mergePatch(
      '/api/v1/namespaces/a/configmaps/b',
      { data: { k: 'v' } },
      { ...opts, contentType: 'text/x' },
    );
    const [create, replace, patch] = seen;
    assert.deepEqual(
      seen.map((s) => [s.method, s.url, s.headers['content-type'], s.headers['x-extra']]),
      [
        ['POST', '/api/v1/namespaces/a/configmaps?dryRun=All', 'application/json', '2'],
        ['PUT', '/api/v1/namespaces/a/configmaps/b?dryRun=All', 'application/json', '2'],
        // a merge patch is always sent as one, whatever content type the options name
        ['PATCH', '/api/v1/namespaces/a/configmaps/b?dryRun=All', 'application/merge-patch+json', '2'],
      ],
    );
    for (const s of [create, replace, patch]) {
      assert.equal(s.headers.authorization, 'Bearer token-2');
      assert.equal(s.headers['impersonate-user'], 'jane');
      assert.equal(s.headers.accept, 'application/json');
    }
    assert.equal(patch.headers['content-length'], String(JSON.stringify({ data: { k: 'v' } }).length));
  } finally {
    client.close();
  }
});

/**
 * The parts of the benchmark harness (bench/lib) that decide what is shown or exposed: the reader token never
 * reaches wrk's command line, wrk's report is parsed, and the filter-cost A/B is read as paired ratios.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorizationScript, parseWrkOutput, wrkArgs } from '../../bench/lib/wrk.js';
import { fmtPaired, pairedRatios } from '../../bench/lib/stats.js';
import { isYoungGc, parseGcLine } from '../../bench/lib/gc-trace.js';
import { execFileSync } from 'node:child_process';

describe('bench harness: wrk', () => {
  test('the Authorization value goes to a private file read by a Lua script, never to the command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-bench-test-'));
    try {
      const secret = 'Bearer eyJhbGciOiJSUzI1NiJ9.not-a-real-token.sig';
      const script = authorizationScript(dir, 'ours', secret);
      const lua = readFileSync(script, 'utf8');
      assert.ok(!lua.includes('not-a-real-token'), 'the script names the file, not the value');
      const valueFile = /io\.open\("([^"]+)"/.exec(lua)?.[1];
      assert.ok(valueFile, lua);
      assert.equal(readFileSync(valueFile, 'utf8'), `${secret}\n`);
      assert.equal(statSync(valueFile).mode & 0o777, 0o600);
      const args = wrkArgs({
        url: 'https://127.0.0.1:1/metrics',
        connections: 8,
        durationS: 3,
        headers: { Accept: 'text/plain' },
        script,
        cpu: '1',
      });
      assert.deepEqual(args.slice(0, 3), ['-c', '1', 'wrk']);
      assert.ok(args.includes(script));
      assert.ok(!args.join(' ').includes('not-a-real-token'));
      assert.throws(
        () =>
          wrkArgs({
            url: 'https://127.0.0.1:1/metrics',
            connections: 1,
            durationS: 1,
            headers: { authorization: secret },
          }),
        /not on the command line/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("parses wrk's --latency report", () => {
    const out = [
      'Running 3s test @ https://127.0.0.1:40000/metrics',
      '  1 threads and 8 connections',
      '  Latency Distribution',
      '     50%    8.50ms',
      '     75%   10.10ms',
      '     90%   12.00ms',
      '     99%    1.20s',
      '  2700 requests in 3.00s, 2.25GB read',
      '  Non-2xx or 3xx responses: 3',
      'Requests/sec:    899.51',
      'Transfer/sec:    768.00MB',
    ].join('\n');
    const r = parseWrkOutput(out);
    assert.equal(r.requests, 2700);
    assert.equal(r.durationS, 3);
    assert.equal(r.reqPerSec, 899.51);
    assert.equal(r.p50Ms, 8.5);
    assert.equal(r.p99Ms, 1200);
    assert.equal(r.bytesRead, 2.25 * 1024 ** 3);
    assert.equal(r.non2xx, 3);
    assert.throws(() => parseWrkOutput('connection refused'), /unexpected wrk output/);
  });
});

describe('bench harness: paired ratios', () => {
  test('pairs without both values are left out; the summary is the median change and the range', () => {
    const ratios = pairedRatios([
      [1.1, 1.0],
      [0.98, 1.0],
      [1.02, 1.0],
      [undefined, 1.0],
      [1.0, 0],
    ]);
    assert.deepEqual(
      ratios.map((r) => Math.round(r * 100) / 100),
      [1.1, 0.98, 1.02],
    );
    assert.equal(fmtPaired(ratios), '+2.0% (−2.0%…+10.0%, 3 pairs)');
    assert.equal(fmtPaired([]), '–');
  });
});

describe('bench harness: --trace-gc lines', () => {
  test("reads this Node's own trace of young and full collections", () => {
    // a real trace: allocation enough for scavenges, then two full collections forced with gc()
    const code =
      'let keep = []; for (let i = 0; i < 200000; i++) { keep.push({ i }); if (keep.length > 1000) keep = []; } gc(); gc();';
    const out = execFileSync(process.execPath, ['--trace-gc', '--expose-gc', '--max-semi-space-size=1', '-e', code], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = out.split('\n').filter((l) => l.includes(' ms: '));
    const events = lines.map(parseGcLine);
    assert.ok(lines.length >= 3, out);
    assert.deepEqual(
      events.filter((e) => e === undefined),
      [],
      `every GC line is read:\n${out}`,
    );
    const young = events.filter((e) => e && isYoungGc(e));
    const full = events.filter((e) => e && !isYoungGc(e));
    assert.ok(young.length >= 1, out);
    assert.ok(full.length >= 2, out);
    for (const e of events) {
      assert.ok(e!.beforeMb > 0 && e!.afterMb > 0 && e!.committedAfterMb >= e!.afterMb, JSON.stringify(e));
    }
    assert.equal(parseGcLine('ELD {"state":"started"}'), undefined);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, setLogSink, redactString } from '../../src/util/log.js';

function capture(fn: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    fn();
  } finally {
    setLogSink(prev);
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('log lines are JSON objects with level, logger, msg and fields', () => {
  const [entry] = capture(() => createLogger('controller-runtime.metrics').info('Serving metrics server', { bindAddress: ':8443', secure: true }));
  assert.equal(entry?.level, 'info');
  assert.equal(entry?.logger, 'controller-runtime.metrics');
  assert.equal(entry?.msg, 'Serving metrics server');
  assert.equal(entry?.bindAddress, ':8443');
  assert.equal(entry?.secure, true);
  assert.match(String(entry?.ts), /^\d{4}-\d\d-\d\dT/);
});

test('credential fields and bearer tokens, JWTs and private keys inside strings are redacted', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlc2lnbmF0dXJl';
  const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----';
  const entries = capture(() => {
    const log = createLogger('t');
    log.info('x', { token: 'abc', Authorization: 'Bearer abc', nested: { password: 'p' } });
    log.error(`request failed: Authorization: Bearer s3cr3t-value and ${jwt}`);
    log.warn('key', { err: new Error(`bad key ${pem}`) });
  });
  const text = entries.map((e) => JSON.stringify(e)).join('\n');
  for (const secret of ['abc', 's3cr3t-value', jwt, 'MIGHAgEAMBMGByqGSM49', '"p"']) {
    assert.ok(!text.includes(secret), `log output must not contain ${secret}`);
  }
  assert.equal(entries[0]?.token, '[REDACTED]');
  assert.equal(redactString('Bearer abc.def'), 'Bearer [REDACTED]');
});

test('child loggers carry the parent name and fields', () => {
  const [entry] = capture(() => createLogger('manager', { a: 1 }).child('controller', { controller: 'cm' }).debug('hidden'));
  assert.equal(entry, undefined, 'debug is below the default threshold');
  const [e2] = capture(() => createLogger('manager', { a: 1 }).child('controller', { controller: 'cm' }).warn('w'));
  assert.equal(e2?.logger, 'manager.controller');
  assert.equal(e2?.a, 1);
  assert.equal(e2?.controller, 'cm');
});

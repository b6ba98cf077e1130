import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  configureLogging,
  createLogger,
  setLogSink,
  redactString,
  type TimeEncoding,
} from '../../packages/ctrlmetrics/src/util/log.js';

/** The lines `fn` logs. */
function lines(fn: () => void): string[] {
  const out: string[] = [];
  const prev = setLogSink((l) => out.push(l));
  try {
    fn();
  } finally {
    setLogSink(prev);
  }
  return out;
}

/** The entries `fn` logs, as JSON objects. */
function capture(fn: () => void): Record<string, unknown>[] {
  return lines(fn).map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('log lines are JSON objects with level, logger, msg and fields', () => {
  const [entry] = capture(() =>
    createLogger('controller-runtime.metrics').info('Serving metrics server', { bindAddress: ':8443', secure: true }),
  );
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
  const [entry] = capture(() =>
    createLogger('manager', { a: 1 }).child('controller', { controller: 'cm' }).debug('hidden'),
  );
  assert.equal(entry, undefined, 'debug is below the default threshold');
  const [e2] = capture(() => createLogger('manager', { a: 1 }).child('controller', { controller: 'cm' }).warn('w'));
  assert.equal(e2?.logger, 'manager.controller');
  assert.equal(e2?.a, 1);
  assert.equal(e2?.controller, 'cm');
});

describe("configureLogging (controller-runtime's zap options)", () => {
  afterEach(() => configureLogging({ encoder: 'json', level: 'info', stacktraceLevel: 'panic' }, false));

  test('console encoder: time, LEVEL, logger, message, then the fields as JSON (redacted)', () => {
    configureLogging({ encoder: 'console', stacktraceLevel: 'panic' }, false);
    const [a, b] = lines(() => {
      const log = createLogger('controller-runtime.metrics');
      log.info('Serving metrics server', { bindAddress: ':8443', token: 'abc' });
      log.warn('request failed: Authorization: Bearer s3cr3t');
    });
    assert.match(
      a,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tINFO\tcontroller-runtime\.metrics\tServing metrics server\t\{"bindAddress":":8443","token":"\[REDACTED\]"\}$/,
    );
    assert.match(b, /^\S+\tWARN\tcontroller-runtime\.metrics\trequest failed: Authorization: Bearer \[REDACTED\]$/);
  });

  test('defaults: console on a terminal, JSON otherwise; info level; stack traces from error', () => {
    configureLogging({}, true);
    assert.match(lines(() => createLogger('t').info('m'))[0], /\tINFO\tt\tm$/);
    configureLogging({}, false);
    const out = lines(() => {
      const log = createLogger('t');
      log.debug('hidden');
      log.warn('no stack');
      log.error('with stack');
    });
    assert.equal(out.length, 2);
    const [warn, error] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(warn.stacktrace, undefined);
    assert.match(String(error.stacktrace), /log\.test\.ts/, 'the stack starts at the caller');
    assert.doesNotMatch(String(error.stacktrace), /util[\\/]log\.ts/, "without the logger's own frames");
  });

  test('development mode: console, debug level, stack traces from warn', () => {
    configureLogging({ development: true }, false);
    const out = lines(() => {
      const log = createLogger('t');
      log.debug('shown');
      log.info('no stack');
      log.warn('with stack');
    });
    assert.match(out[0], /\tDEBUG\tt\tshown$/);
    assert.match(out[1], /\tINFO\tt\tno stack$/);
    assert.match(out[2], /\tWARN\tt\twith stack\n\s*at .*log\.test\.ts/);
  });

  test('level panic silences everything; an explicit level overrides the mode', () => {
    configureLogging({ level: 'panic' }, false);
    assert.deepEqual(
      lines(() => createLogger('t').error('x')),
      [],
    );
    configureLogging({ development: true, level: 'error', encoder: 'json' }, false);
    const out = lines(() => {
      createLogger('t').warn('hidden');
      createLogger('t').error('shown');
    });
    assert.equal(out.length, 1);
    assert.equal((JSON.parse(out[0]) as { msg: string }).msg, 'shown');
  });

  test('time encodings: epoch, millis and nano are numbers of the current time; iso8601, rfc3339 and rfc3339nano are UTC text', () => {
    const ts = (timeEncoding: TimeEncoding): { value: unknown; before: number; after: number } => {
      configureLogging({ encoder: 'json', timeEncoding }, false);
      const before = Date.now();
      const [line] = lines(() => createLogger('t').info('m'));
      const after = Date.now();
      return { value: (JSON.parse(line) as { ts: unknown }).ts, before, after };
    };
    const within = (v: unknown, lo: number, hi: number) => typeof v === 'number' && v >= lo && v <= hi;
    const e = ts('epoch');
    assert.ok(within(e.value, e.before / 1000, e.after / 1000), String(e.value));
    const m = ts('millis');
    assert.ok(within(m.value, m.before, m.after), String(m.value));
    const n = ts('nano');
    assert.ok(within(n.value, n.before * 1e6, n.after * 1e6), String(n.value));
    assert.match(String(ts('iso8601').value), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(String(ts('rfc3339').value), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const nano = ts('rfc3339nano');
    assert.match(
      String(nano.value),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/,
      'trailing zeros of the fraction dropped',
    );
    assert.ok(Date.parse(String(nano.value)) >= nano.before - 999 && Date.parse(String(nano.value)) <= nano.after);
  });
});

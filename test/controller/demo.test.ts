/**
 * `ctrlmetrics demo` as a user runs it: a real child process on ephemeral ports, scraped with curl and the
 * reader token it wrote, inspected with kubectl and the kubeconfig it wrote, stopped with SIGTERM.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { eventually, httpsGet, parseExposition, value, type Family } from './helpers/exposition.js';
import { startTestCluster } from '../helpers/cluster.js';
import { cliArgs } from '../helpers/process.js';
import { generateSelfSignedCertificate } from '../../packages/ctrlmetrics/src/certwatcher/index.js';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function runDemo(args: string[]): Run {
  const child = spawn(process.execPath, [...cliArgs(), 'demo', ...args], {
    cwd: ROOT,
    env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(t));
}

function sh(command: string, timeoutMs = 15_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', command],
      { cwd: ROOT, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const CURL_LINE = /^\s*(curl -k -H @(\S+) (https:\/\/127\.0\.0\.1:\d+\/metrics))\s*$/m;

test(
  'ctrlmetrics demo: secure metrics of both controllers with the printed curl line; one demo per state directory; clean SIGTERM; restart on the same state with plain HTTP',
  { timeout: 120_000 },
  async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-demo-'));
    dirs.push(stateDir);
    const common = [
      '--state-dir',
      stateDir,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
    ];
    const run = runDemo([...common, '--load-interval', '0.3', '--duration', '90']);
    const m = await eventually(
      () =>
        CURL_LINE.exec(run.stdout()) ??
        (run.child.exitCode !== null ? Promise.reject(new Error(`demo exited: ${run.stderr()}`)) : undefined),
      'the curl line',
      45_000,
      200,
    );
    const [, curlLine, headerPath, url] = m as unknown as [string, string, string, string];
    const tokenPath = join(stateDir, 'reader.token');
    assert.equal(
      headerPath,
      join(stateDir, 'reader.header'),
      'the token is read from a file, never put on the command line',
    );
    assert.equal((await stat(tokenPath)).mode & 0o777, 0o600, 'the reader token is private');
    assert.equal((await stat(headerPath)).mode & 0o777, 0o600, 'the header file is private');
    assert.equal(
      await readFile(headerPath, 'utf8'),
      `Authorization: Bearer ${(await readFile(tokenPath, 'utf8')).trim()}\n`,
    );
    assert.doesNotMatch(run.stdout(), /Bearer|\$\(/, 'no token and no command substitution in the banner');
    await stat(join(stateDir, 'kubeconfig'));

    // the exact printed command, through a shell, until both controllers have reconciled
    const curl = async () => {
      const r = await sh(`${curlLine} -s -w '\\n%{http_code}'`);
      const body = r.stdout.slice(0, r.stdout.lastIndexOf('\n'));
      const code = r.stdout.slice(r.stdout.lastIndexOf('\n') + 1);
      if (code !== '200') throw new Error(`curl answered ${code}: ${body.slice(0, 200)}`);
      return parseExposition(body);
    };
    const families = await eventually(
      async () => {
        const f = await curl();
        const cm = value(f, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'success' }) ?? 0;
        const secret = value(f, 'controller_runtime_reconcile_total', { controller: 'secret', result: 'success' }) ?? 0;
        const goobers = value(f, 'goobers_total', {}) ?? 0;
        return cm >= 3 && secret >= 1 && goobers >= 3 ? f : undefined;
      },
      'reconciles of both controllers on /metrics',
      40_000,
      500,
    );
    // controller-runtime v0.24's metric set: the timeouts counter, and the priority queue's depth by priority
    assert.equal(value(families, 'controller_runtime_reconcile_timeouts_total', { controller: 'configmap' }), 0);
    const depthPriorities = new Set(
      families
        .get('workqueue_depth')!
        .samples.filter((x) => x.labels.controller === 'configmap')
        .map((x) => x.labels.priority),
    );
    assert.ok(!depthPriorities.has(''), `no legacy-queue series: ${[...depthPriorities].join(', ')}`);
    assert.ok(
      depthPriorities.has('-100') || depthPriorities.has('0'),
      `per-priority series: ${[...depthPriorities].join(', ')}`,
    );
    assert.equal(families.get('goobers_total')?.help, 'Number of goobers processed');
    assert.equal(families.get('goobers_total')?.type, 'counter');
    // the steady load keeps them reconciling: the counters rise between scrapes
    const successes = (f: Map<string, Family>) =>
      value(f, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'success' }) ?? 0;
    const adds = (f: Map<string, Family>) =>
      value(f, 'workqueue_adds_total', { name: 'configmap', controller: 'configmap' }) ?? 0;
    await eventually(
      async () => {
        const f = await curl();
        return successes(f) > successes(families) && adds(f) > adds(families);
      },
      'the reconcile and queue counters to rise',
      20_000,
      300,
    );

    // the serving CA is written beside the API's and printed: the verified commands of the banner work as printed
    const caPath = join(stateDir, 'metrics-ca.crt');
    assert.match(run.stdout(), new RegExp(`^  metrics CA:     ${caPath.replace(/[.]/g, '\\.')} `, 'm'));
    const verifiedCurl = new RegExp(
      `^  (curl --cacert ${caPath.replace(/[.]/g, '\\.')} -H @\\S+ https://127\\.0\\.0\\.1:\\d+/metrics)$`,
      'm',
    ).exec(run.stdout());
    assert.ok(verifiedCurl, run.stdout());
    assert.match((await sh(`${verifiedCurl[1]} -s -o /dev/null -w '%{http_code}'`)).stdout, /^200$/);
    const scrapeLine = /^ {2}ctrlmetrics scrape (.+)$/m.exec(run.stdout());
    assert.ok(scrapeLine, run.stdout());
    const verified = await sh(
      `node packages/cli/dist/cli.js scrape ${scrapeLine[1]} --match '^goobers_total$'`,
      30_000,
    );
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /^goobers_total \d+/m);
    // the API's CA does not verify the metrics endpoint, and scrape says which CA to pass
    const wrongCa = await sh(
      `node packages/cli/dist/cli.js scrape ${url} --token-file ${tokenPath} --cacert ${join(stateDir, 'ca.crt')}`,
      30_000,
    );
    assert.equal(wrongCa.code, 1);
    assert.match(wrongCa.stderr, /is not signed by the CA in --cacert .*ca\.crt/);

    // no token: 401, as controller-runtime's filter answers
    const anon = await sh(`curl -k -s -o /dev/null -w '%{http_code}' ${url}`);
    assert.equal(anon.stdout, '401');
    assert.equal(
      (await tlsProbe(url)).alpn,
      'http/1.1',
      'HTTP/2 is off unless --enable-http2 (CVE-2023-44487), as kubebuilder scaffolds it',
    );

    // the derived objects exist, seen with kubectl and the kubeconfig the demo wrote
    const kc = await sh(
      `kubectl --kubeconfig ${join(stateDir, 'kubeconfig')} get configmaps -n ctrlmetrics-demo -o name`,
    );
    assert.equal(kc.code, 0, kc.stderr);
    for (const name of ['demo-0', 'demo-0-digest', 'demo-1-digest', 'demo-2-digest'])
      assert.match(kc.stdout, new RegExp(`configmap/${name}\\b`));

    // a second demo on the same state directory is refused, and leaves the running one's files alone
    const kubeconfigBefore = await readFile(join(stateDir, 'kubeconfig'), 'utf8');
    const second = runDemo([...common, '--duration', '60']);
    assert.equal(await within(second.exited, 30_000, 'the second demo to exit'), 1);
    assert.match(
      second.stderr(),
      new RegExp(
        `^error: another ctrlmetrics demo \\(pid ${run.child.pid}\\) is using the state directory .*--state-dir`,
        'm',
      ),
    );
    assert.equal(await readFile(join(stateDir, 'kubeconfig'), 'utf8'), kubeconfigBefore);

    run.child.kill('SIGTERM');
    assert.equal(await within(run.exited, 30_000, 'exit after SIGTERM'), 0, run.stderr());
    assert.match(run.stdout(), /ctrlmetrics demo stopped/);
    await assert.rejects(
      stat(join(stateDir, 'demo.pid')),
      { code: 'ENOENT' },
      'the state directory lock is released at exit',
    );

    // again on the same state directory (RBAC re-applied, objects kept), plain HTTP (a Go boolean form), with the
    // ServiceMonitor CRD and debug logs in zap's console layout, stopping by itself after --duration (a Go duration)
    const again = runDemo([
      ...common,
      '--metrics-secure=False',
      '--crds',
      'prometheus-operator',
      '--zap-log-level=debug',
      '--zap-encoder',
      'console',
      '--load-interval',
      '300ms',
      '--duration',
      '6s',
    ]);
    const plain = await eventually(
      () => /^\s*curl (http:\/\/127\.0\.0\.1:\d+\/metrics)\s*$/m.exec(again.stdout()) ?? undefined,
      'the plain curl line',
      45_000,
      200,
    );
    const crd = await sh(
      `kubectl --kubeconfig ${join(stateDir, 'kubeconfig')} get crd servicemonitors.monitoring.coreos.com -o name`,
    );
    assert.equal(
      crd.stdout.trim(),
      'customresourcedefinition.apiextensions.k8s.io/servicemonitors.monitoring.coreos.com',
      crd.stderr,
    );
    assert.doesNotMatch(again.stdout(), /Bearer/, 'no token needed, none suggested');
    const r = await sh(`curl -s -w '\\n%{http_code}' ${plain[1]}`);
    assert.match(r.stdout, /\n200$/);
    assert.ok(parseExposition(r.stdout.slice(0, r.stdout.lastIndexOf('\n'))).has('controller_runtime_reconcile_total'));
    assert.equal(await within(again.exited, 45_000, 'exit after --duration'), 0, again.stderr());
    // reconcile chatter is debug: shown here, in the console layout, and absent from the first run's info-level output
    assert.match(again.stderr(), /^\d{4}-\d\d-\d\dT\S+\tDEBUG\t\S+\t(created|updated) digest\t\{/m);
    assert.doesNotMatch(run.stderr(), /"level":"(debug|info)"[^\n]*digest/);
  },
);

test(
  'ctrlmetrics demo: a bad flag value is a usage error saying what the flag takes (exit 1 and the help hint, as kubectl)',
  { timeout: 60_000 },
  async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['--zap-log-level=loud'],
        /^error: --zap-log-level: invalid log level "loud": one of 'debug', 'info', 'error', 'panic', or an integer > 0\nSee 'ctrlmetrics demo --help' for usage\.\n$/,
      ],
      [
        ['--zap-encoder', 'text'],
        /^error: --zap-encoder: invalid encoder "text": 'json' or 'console'\nSee 'ctrlmetrics demo --help' for usage\.\n$/,
      ],
      [
        ['--leader-elect=yes'],
        /^error: .*expected a boolean \(1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False\), got "yes"/,
      ],
      [
        ['--duration', '5x'],
        /^error: --duration: invalid duration "5x" \(use e\.g\. 30s, 10m, 1h\)\nSee 'ctrlmetrics demo --help' for usage\.\n$/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = runDemo(['--state-dir', join(tmpdir(), 'ctrlmetrics-demo-never-created'), ...args]);
      assert.equal(await within(r.exited, 30_000, `demo ${args.join(' ')}`), 1, r.stderr());
      assert.match(r.stderr(), re);
    }
  },
);

test(
  'ctrlmetrics demo --kubeconfig: exits non-zero with a clear message when the API cannot be reached',
  { timeout: 60_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-demo-kc-'));
    dirs.push(dir);
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:' + port + '", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: abc}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        'current-context: c',
        '',
      ].join('\n'),
    );
    const run = runDemo([
      '--kubeconfig',
      kubeconfig,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
    ]);
    const code = await within(run.exited, 45_000, 'exit');
    assert.equal(code, 1);
    assert.match(
      run.stderr(),
      /^error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*\(check --kubeconfig and that the cluster is running\)$/m,
    );
  },
);

test(
  'ctrlmetrics demo: every conflict (another demo on the state directory, addresses in use) is reported at once with its flag, before anything starts',
  { timeout: 60_000 },
  async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-demo-busy-'));
    dirs.push(stateDir);
    // another live process holds the lock
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    await writeFile(join(stateDir, 'demo.pid'), `${holder.pid}\n`);
    const blockers = [net.createServer(), net.createServer()];
    await Promise.all(blockers.map((b) => new Promise<void>((r) => b.listen(0, '127.0.0.1', r))));
    const [metricsPort, healthPort] = blockers.map((b) => (b.address() as net.AddressInfo).port);
    try {
      const run = runDemo([
        '--state-dir',
        stateDir,
        '--metrics-bind-address',
        `127.0.0.1:${metricsPort}`,
        '--health-probe-bind-address',
        `127.0.0.1:${healthPort}`,
      ]);
      const code = await within(run.exited, 45_000, 'exit');
      assert.equal(code, 1, run.stderr());
      assert.equal(
        run.stderr(),
        'error: the demo cannot start:\n' +
          `  - another ctrlmetrics demo (pid ${holder.pid}) is using the state directory ${stateDir}: stop it, or pass --state-dir DIR\n` +
          `  - the metrics address 127.0.0.1:${metricsPort} is already in use: stop the process using it, or pick another with --metrics-bind-address\n` +
          `  - the health probe address 127.0.0.1:${healthPort} is already in use: stop the process using it, or pick another with --health-probe-bind-address\n`,
      );
      assert.doesNotMatch(run.stdout(), /curl/, 'no instructions printed for an endpoint that does not exist');
      await assert.rejects(
        stat(join(stateDir, 'kubeconfig')),
        { code: 'ENOENT' },
        'the embedded API was never started',
      );
      assert.equal(
        (await readFile(join(stateDir, 'demo.pid'), 'utf8')).trim(),
        String(holder.pid),
        'the other demo keeps its lock',
      );

      // one conflict alone is one line; a lock left by a process that is gone is no conflict
      holder.kill();
      await new Promise((r) => holder.once('exit', r));
      const alone = runDemo([
        '--state-dir',
        stateDir,
        '--metrics-bind-address',
        `127.0.0.1:${metricsPort}`,
        '--health-probe-bind-address',
        '127.0.0.1:0',
      ]);
      assert.equal(await within(alone.exited, 45_000, 'exit'), 1, alone.stderr());
      assert.equal(
        alone.stderr(),
        `error: the metrics address 127.0.0.1:${metricsPort} is already in use: stop the process using it, or pick another with --metrics-bind-address\n`,
      );
    } finally {
      holder.kill();
      for (const b of blockers) b.close();
    }
  },
);

/** Connects with TLS offering h2 and http/1.1; resolves the negotiated protocol and the served leaf's fingerprint. */
function tlsProbe(url: string): Promise<{ alpn: string | false; fingerprint256: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = tls.connect(
      {
        host: u.hostname,
        port: Number(u.port),
        ALPNProtocols: ['h2', 'http/1.1'],
        rejectUnauthorized: false,
        timeout: 10_000,
      },
      () => {
        resolve({ alpn: sock.alpnProtocol ?? false, fingerprint256: sock.getPeerCertificate().fingerprint256 });
        sock.destroy();
      },
    );
    sock.on('timeout', () => sock.destroy(new Error('TLS probe timed out')));
    sock.on('error', reject);
  });
}

test(
  'ctrlmetrics demo --kubeconfig: runs the example operator against that cluster instead of the embedded API; certificate and HTTP/2 flags apply',
  { timeout: 90_000 },
  async () => {
    const cluster = await startTestCluster();
    try {
      const reader = await cluster.readerToken();
      const certDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-demo-cert-'));
      dirs.push(certDir);
      const cert = await generateSelfSignedCertificate();
      await writeFile(join(certDir, 'server.pem'), cert.certPem);
      await writeFile(join(certDir, 'server-key.pem'), cert.keyPem, { mode: 0o600 });
      const run = runDemo([
        '--kubeconfig',
        cluster.authority.kubeconfig,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
        '--metrics-cert-path',
        certDir,
        '--metrics-cert-name',
        'server.pem',
        '--metrics-cert-key',
        'server-key.pem',
        '--enable-http2',
        '--load-interval',
        '0.3',
        '--duration',
        '60',
      ]);
      const m = await eventually(
        () =>
          /^\s*metrics:\s+(https:\/\/127\.0\.0\.1:\d+\/metrics)\s*$/m.exec(run.stdout()) ??
          (run.child.exitCode !== null ? Promise.reject(new Error(`demo exited: ${run.stderr()}`)) : undefined),
        'the metrics line',
        45_000,
        200,
      );
      assert.match(
        run.stdout(),
        new RegExp(`Kubernetes API: ${cluster.authority.url.replace(/[.]/g, '\\.')} \\(kubeconfig `),
      );
      assert.match(
        run.stdout(),
        /kubectl create token SERVICE_ACCOUNT -n NAMESPACE \| sed 's\/\^\/Authorization: Bearer \/' \| curl -k -H @- https:/,
        'no reader token is made on a real cluster: the banner says how to get one, off the command line',
      );
      // the load and the derived objects land in the given cluster
      await eventually(
        async () => {
          try {
            return await cluster.admin.get('/api/v1/namespaces/ctrlmetrics-demo/configmaps/demo-0-digest');
          } catch {
            return undefined;
          }
        },
        'the derived ConfigMap in the given cluster',
        30_000,
        200,
      );
      const probe = await tlsProbe(m[1]);
      assert.equal(
        probe.fingerprint256,
        new X509Certificate(cert.certPem).fingerprint256,
        'the certificate from --metrics-cert-path is served',
      );
      assert.equal(probe.alpn, 'h2', '--enable-http2 offers h2');
      const res = await httpsGet(m[1], reader);
      assert.equal(res.status, 200, res.body.slice(0, 200));
      assert.ok(
        (value(parseExposition(res.body), 'controller_runtime_reconcile_total', {
          controller: 'configmap',
          result: 'success',
        }) ?? 0) >= 1,
      );
      run.child.kill('SIGINT');
      assert.equal(await within(run.exited, 30_000, 'exit after SIGINT (Ctrl-C)'), 0, run.stderr());
    } finally {
      await cluster.stop();
    }
  },
);

test(
  'npm start: another demo on the state directory is reported before the build, which then does not run',
  { timeout: 60_000 },
  async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-demo-npmstart-'));
    dirs.push(stateDir);
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(join(stateDir, 'demo.pid'), `${holder.pid}\n`);
      const r = await sh(
        `npm start --silent -- --state-dir ${stateDir} --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0`,
        45_000,
      );
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(
        r.stderr,
        `error: another ctrlmetrics demo (pid ${holder.pid}) is using the state directory ${stateDir}: stop it, or pass --state-dir DIR\n`,
      );
      assert.doesNotMatch(r.stdout, /building/, 'no build before the conflict is reported');
    } finally {
      holder.kill();
    }
  },
);

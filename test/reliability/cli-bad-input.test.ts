/**
 * CLI and scaffolder bad input, swept over every command: unknown flags, malformed kubeconfigs, invalid
 * project names, unwritable directories, bad addresses. Each must end with a non-zero exit code, one clear
 * `error: ...` line on stderr (usage errors add kubectl's "See 'ctrlmetrics CMD --help' for usage." hint), no stack
 * trace, and nothing half-written.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/process.js';

let tmp = '';
let aFile = '';

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
  /** What the error line must say. */
  says?: RegExp;
  /** Paths that must not exist afterwards. */
  absent?: string[];
  /** The command must have ended by then (it is killed after). */
  timeoutMs?: number;
}

/** kubectl's last line of a usage error. */
const HINT = /^(See 'ctrlmetrics [a-z-]+ --help' for usage\.|Run 'ctrlmetrics --help' for usage\.)$/;

async function check(c: Case): Promise<void> {
  const r = await runCli(c.args, {
    env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn', KUBECONFIG: '', ...c.env },
    timeoutMs: c.timeoutMs ?? 30_000,
  });
  assert.ok(
    !r.timedOut,
    `${c.name}: still running after ${c.timeoutMs ?? 30_000} ms (killed); stderr: ${r.stderr.slice(0, 300)}`,
  );
  // structured log lines (JSON, e.g. the manager's "problem running manager") are logs, not the user-facing error
  const isLog = (l: string) => l.startsWith('{"ts"');
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !HINT.test(l.trim()) && !isLog(l));
  assert.notEqual(r.code, 0, `${c.name}: exit code 0\n${r.stdout}\n${r.stderr}`);
  assert.equal(lines.length, 1, `${c.name}: want one error line, got ${lines.length}:\n${r.stderr}`);
  assert.match(lines[0], /^error: \S/, `${c.name}: ${lines[0]}`);
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at .+:\d+:\d+\)?$/m, `${c.name}: stack trace printed`);
  if (c.says) assert.match(lines[0], c.says, `${c.name}: ${lines[0]}`);
  for (const p of c.absent ?? []) assert.ok(!existsSync(p), `${c.name}: ${p} was left behind`);
}

/** Runs the cases a few at a time (each is a Node process start). */
async function sweep(cases: Case[]): Promise<void> {
  const failures: string[] = [];
  for (let i = 0; i < cases.length; i += 3) {
    const batch = cases.slice(i, i + 3);
    const results = await Promise.allSettled(batch.map(check));
    for (const r of results) if (r.status === 'rejected') failures.push((r.reason as Error).message);
  }
  assert.deepEqual(failures, [], failures.join('\n---\n'));
}

describe('CLI bad input: one error line, non-zero, nothing half-written', { timeout: 240_000 }, () => {
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-cli-bad-'));
    aFile = join(tmp, 'a-file');
    await writeFile(aFile, 'not a directory\n');
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('unknown flags on every command', async () => {
    const proj = join(tmp, 'unknown-flag-proj');
    const cases: Case[] = [
      ['demo'],
      ['authority'],
      ['init', '--project-name', 'okname', '--dir', proj],
      ['edit', '--dir', proj, '--enable', 'prometheus'],
      ['grant', '--serviceaccount', 'a:b'],
      ['token', '--namespace', 'a', 'b'],
      ['monitors', '-n', 'a'],
      ['label-namespace', 'a'],
      ['scrape', 'https://127.0.0.1:1/metrics'],
      ['doctor', '--namespace', 'a'],
      ['prometheus-config', '--from', proj],
    ].map((args) => ({
      name: `${args[0]} --no-such-flag`,
      args: [...args, '--no-such-flag'],
      says: /--no-such-flag/,
      absent: [proj],
    }));
    cases.push({ name: 'unknown command', args: ['no-such-command'], says: /no-such-command/ });
    await sweep(cases);
  });

  test('malformed and unusable kubeconfigs on every command that talks to the API', async () => {
    const broken = join(tmp, 'broken.kubeconfig');
    await writeFile(broken, 'apiVersion: v1\nclusters: [\n  - name: x\n    cluster: {server: "https://127.0.0.1:1"\n');
    const empty = join(tmp, 'empty.kubeconfig');
    await writeFile(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const binary = join(tmp, 'binary.kubeconfig');
    await writeFile(binary, Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 0x1b]));
    const commands = [
      ['grant', '--serviceaccount', 'a:b'],
      ['token', '--namespace', 'a', 'b'],
      ['monitors', '-n', 'a'],
      ['label-namespace', 'a'],
      ['doctor', '--namespace', 'a'],
    ];
    const cases: Case[] = [];
    for (const args of commands)
      cases.push({ name: `${args[0]} with a malformed YAML kubeconfig`, args: [...args, '--kubeconfig', broken] });
    for (const [what, file] of [
      ['no clusters', empty],
      ['binary garbage', binary],
      ['missing file', join(tmp, 'nope.kubeconfig')],
    ] as const) {
      cases.push({ name: `grant with a ${what} kubeconfig`, args: [...commands[0], '--kubeconfig', file] });
    }
    cases.push({
      name: 'demo with a malformed kubeconfig',
      args: [
        'demo',
        '--kubeconfig',
        broken,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
      ],
    });
    cases.push({
      name: 'grant with KUBECONFIG pointing at a malformed file',
      args: ['grant', '--serviceaccount', 'a:b'],
      env: { KUBECONFIG: broken },
    });
    await sweep(cases);
  });

  test('init: invalid project names and domains write nothing', async () => {
    const names = ['Bad_Name', '-leading', 'a'.repeat(64), 'dots.in.name', '', '../escape'];
    const cases: Case[] = names.map((n, i) => {
      const dir = join(tmp, `bad-name-${i}`);
      return {
        name: `init --project-name ${JSON.stringify(n)}`,
        args: ['init', '--project-name', n, '--dir', dir],
        absent: [dir],
      };
    });
    const dir = join(tmp, 'bad-domain');
    cases.push({
      name: 'init with a bad domain',
      args: ['init', '--project-name', 'okname', '--domain', 'Not_A_Domain!', '--dir', dir],
      absent: [dir],
    });
    await sweep(cases);
  });

  test('unwritable places: nothing is half-written', async () => {
    // running as root makes permission bits moot: a path below a regular file is unwritable for everyone
    const existing = join(tmp, 'existing-project');
    await mkdir(existing);
    await sweep([
      { name: 'init below a file', args: ['init', '--project-name', 'okname', '--dir', join(aFile, 'proj')] },
      {
        name: 'init in /proc (a file system that refuses new directories)',
        args: ['init', '--project-name', 'okname', '--dir', '/proc/ctrlmetrics-test-proj'],
        timeoutMs: 10_000,
      },
      { name: 'edit of a directory without a project', args: ['edit', '--dir', existing, '--enable', 'prometheus'] },
      {
        name: 'dev in a directory without a project',
        args: ['dev', '--dir', existing],
        says: /no PROJECT file in .*: run ctrlmetrics dev in a project made by ctrlmetrics init/,
      },
      {
        name: 'demo with its state dir below a file',
        args: [
          'demo',
          '--state-dir',
          join(aFile, 'state'),
          '--metrics-bind-address',
          '127.0.0.1:0',
          '--health-probe-bind-address',
          '127.0.0.1:0',
        ],
      },
      {
        name: 'authority with its state dir below a file',
        args: ['authority', '--listen', '127.0.0.1:0', '--state-dir', join(aFile, 'state')],
      },
      {
        name: 'authority writing its kubeconfig below a file',
        args: ['authority', '--listen', '127.0.0.1:0', '--kubeconfig-out', join(aFile, 'kubeconfig')],
        timeoutMs: 10_000,
      },
    ]);
    assert.deepEqual(await readdir(existing), [], 'edit wrote into a directory that holds no project');
  });

  test('bad addresses, durations and paths', async () => {
    await sweep([
      { name: 'authority --listen nonsense', args: ['authority', '--listen', 'not-an-address'] },
      { name: 'authority --listen with a port out of range', args: ['authority', '--listen', '127.0.0.1:99999'] },
      {
        name: 'demo --metrics-bind-address nonsense',
        args: [
          'demo',
          '--state-dir',
          join(tmp, 'demo-bad-addr'),
          '--metrics-bind-address',
          'nonsense',
          '--health-probe-bind-address',
          '127.0.0.1:0',
        ],
      },
      { name: 'demo --duration negative', args: ['demo', '--duration', '-5'] },
      { name: 'demo --metrics-secure maybe', args: ['demo', '--metrics-secure', 'maybe'] },
      {
        name: 'token --duration nonsense',
        args: ['token', '--namespace', 'a', 'b', '--duration', 'soon', '--kubeconfig', join(tmp, 'nope')],
      },
      {
        name: 'prometheus-config --from a missing directory',
        args: ['prometheus-config', '--from', join(tmp, 'missing-dir'), '--target', '127.0.0.1:8443'],
      },
      {
        name: 'prometheus-config --from a file that is not YAML',
        args: ['prometheus-config', '--from', aFile, '--target', '127.0.0.1:8443'],
      },
      { name: 'scrape of a non-URL', args: ['scrape', 'not a url'] },
    ]);
  });
});

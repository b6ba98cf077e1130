// `ctrlmetrics scrape --watch` on a real terminal (tmux, read back with capture-pane) while the manager it watches is
// killed and started again: the screen keeps its table and exactly one status line, the watch keeps
// retrying instead of exiting, the table comes back with the new process, and Ctrl-C ends it with status 0.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ProcessGroup, ROOT, eventually, freePort, type Proc } from '../helpers/process.js';

const COLUMNS = 100;
const ROWS = 16;

function tmux(socket: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', ['-L', socket, '-f', '/dev/null', ...args], { timeout: 10_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`tmux ${args[0]}: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}

describe('scrape --watch in a terminal, across a manager restart', () => {
  let cluster: TestCluster;
  let dir: string;
  let port: number;
  const procs = new ProcessGroup();
  const socket = `ctrlmetrics-watch-${process.pid}`;
  let manager: Proc | undefined;

  const startManager = async () => {
    manager = procs.start(
      'manager',
      process.execPath,
      [
        '--conditions=ctrlmetrics-source',
        '--import',
        'tsx',
        'packages/cli/examples/configmap-operator/main.ts',
        '--kubeconfig',
        cluster.authority.kubeconfig,
        '--metrics-bind-address',
        `127.0.0.1:${port}`,
        '--health-probe-bind-address',
        '0',
        '--metrics-secure=false',
      ],
      { env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn' } },
    );
  };
  const screen = async () => (await tmux(socket, ['capture-pane', '-p', '-t', 'w'])).split('\n');
  const paneDead = async () => (await tmux(socket, ['display-message', '-p', '-t', 'w', '#{pane_dead}'])).trim();
  /** The screen once `ok` holds for it (polled; bounded). */
  const screenWhen = (ok: (lines: string[]) => boolean, what: string) =>
    eventually(
      async () => {
        const lines = await screen();
        return ok(lines) ? lines : undefined;
      },
      what,
      30_000,
      200,
    );
  const statusLines = (lines: string[]) => lines.filter((l) => l.includes('Ctrl-C to stop'));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'watch-tmux-'));
    cluster = await startTestCluster();
    port = await freePort();
    await startManager();
  });
  after(async () => {
    await tmux(socket, ['kill-server']).catch(() => undefined);
    await procs.stopAll();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one status line and its table while the manager is down, and redraws when it is back', async () => {
    // the pane runs a wrapper that records the watch's exit status in a file (tmux 3.3 does not always learn a pane's
    // status when its terminal closes first); the wrapper ignores the Ctrl-C meant for the watch
    const statusFile = join(dir, 'status');
    const wrapper = join(dir, 'run-watch.cjs');
    writeFileSync(
      wrapper,
      `process.on('SIGINT', () => {});\n` +
        `const r = require('node:child_process').spawnSync(process.execPath, ${JSON.stringify(['--conditions=ctrlmetrics-source', '--import', 'tsx', 'packages/cli/cli.ts', 'scrape', `http://127.0.0.1:${port}/metrics`, '--watch', '--interval', '1s'])}, { stdio: 'inherit' });\n` +
        `require('node:fs').writeFileSync(${JSON.stringify(statusFile)}, String(r.status ?? r.signal));\n`,
    );
    const cmd = `exec '${process.execPath}' '${wrapper}'`;
    await tmux(socket, [
      'new-session',
      '-d',
      '-s',
      'w',
      '-x',
      String(COLUMNS),
      '-y',
      String(ROWS),
      '-c',
      ROOT,
      cmd,
      ';',
      'set-option',
      '-t',
      'w',
      'remain-on-exit',
      'on',
    ]);

    const up = await screenWhen(
      (l) =>
        l.some((x) => /^configmap +\S/.test(x)) && l.some((x) => /^secret +\S/.test(x)) && statusLines(l).length === 1,
      'the table of both controllers',
    );
    assert.match(
      up.find((l) => l.startsWith('CONTROLLER'))!,
      /^CONTROLLER +RECONCILES\/S +ERRORS +P50 +P90 +DEPTH/,
    );
    assert.match(statusLines(up)[0], /next scrape in \d+s · Ctrl-C to stop/);

    process.kill(manager!.pid, 'SIGKILL');
    await manager!.exited;
    // three failed attempts later: still one status line, the last table kept and marked stale
    const down = await screenWhen((l) => / attempt [3-9],/.test(statusLines(l)[0] ?? ''), 'three retries');
    assert.equal(statusLines(down).length, 1, down.join('\n'));
    // the reason comes last and is cut at the terminal's edge (one column short of it)
    assert.match(
      statusLines(down)[0],
      /^\S not answering since \d\d:\d\d:\d\dZ · attempt \d+, next in \d+s · Ctrl-C to stop · cannot connect to 127\.0.*…$/,
    );
    assert.equal([...statusLines(down)[0]].length, COLUMNS - 1);
    assert.match(down[0], /not answering since \d\d:\d\d:\d\dZ$/);
    assert.ok(
      down.some((l) => /^configmap +\S/.test(l)),
      'the last table stays on screen',
    );
    assert.equal(down.length <= ROWS + 1, true, 'nothing scrolled');
    for (const l of down) assert.ok([...l].length <= COLUMNS, `wider than the terminal: ${l}`);
    assert.equal(await paneDead(), '0', 'the watch is still running');

    await startManager();
    const back = await screenWhen(
      (l) => !/not answering/.test(l.join('\n')) && l.some((x) => /^configmap +\S/.test(x)),
      'the table back',
    );
    assert.equal(statusLines(back).length, 1, back.join('\n'));
    assert.equal(await paneDead(), '0');

    await tmux(socket, ['send-keys', '-t', 'w', 'C-c']);
    const status = await eventually(
      () => (existsSync(statusFile) ? readFileSync(statusFile, 'utf8') : undefined),
      'the watch to end on Ctrl-C',
      15_000,
      100,
    );
    assert.equal(status, '0', `Ctrl-C ends the watch with status 0; the screen:\n${(await screen()).join('\n')}`);
    // back on the shell's screen, the last table is left in the scrollback
    assert.ok((await screen()).some((l) => l.startsWith('CONTROLLER')));
  });
});

/**
 * test/differential/client_golang/main.go, built once per process with Debian's golang-go and
 * golang-github-prometheus-client-golang-dev (GOPATH mode, no module download; scripts/install-test-deps.sh installs
 * them): client_golang's own encoders and expfmt's protobuf decoder, as an independent reference.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const GO_SRC = resolve(import.meta.dirname, '../differential/client_golang');
let built: Promise<string> | undefined;
let workDir: string | undefined;

/** Builds the program (once) and returns its path; removed when the process exits. */
export function clientGolangBinary(): Promise<string> {
  built ??= (async () => {
    if (!existsSync('/usr/share/gocode/src/github.com/prometheus/client_golang')) {
      assert.fail(
        'client_golang is missing: run scripts/install-test-deps.sh (Debian golang-go, golang-github-prometheus-client-golang-dev)',
      );
    }
    workDir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-client-golang-'));
    process.once('exit', () => rmSync(workDir!, { recursive: true, force: true }));
    const bin = join(workDir, 'client_golang');
    await new Promise<void>((res, rej) =>
      execFile(
        'go',
        ['build', '-o', bin, 'main.go'],
        {
          cwd: GO_SRC,
          env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', GOFLAGS: '' },
          timeout: 300_000,
        },
        (err, _out, stderr) => (err ? rej(new Error(`go build failed: ${stderr || err.message}`)) : res()),
      ),
    );
    return bin;
  })();
  return built;
}

/** Runs the program with `args` and `input` on stdin; its stdout. */
export async function clientGolang(args: string[], input: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  const bin = await clientGolangBinary();
  return new Promise((res, rej) => {
    const child = execFile(
      bin,
      args,
      { encoding: 'buffer', timeout: 60_000, maxBuffer: 256 << 20 },
      (err, stdout, stderr) =>
        err
          ? rej(new Error(`client_golang ${args.join(' ')} failed: ${stderr.toString() || err.message}`))
          : res(stdout),
    );
    // a program that exits before reading all its input closes the pipe: its exit status tells, not an EPIPE
    child.stdin!.on('error', () => {});
    child.stdin!.end(input);
  });
}

/** Length-delimited protobuf read by expfmt's decoder and written back in text 0.0.4 by client_golang. */
export async function decodeProtobufWithGo(pb: Buffer): Promise<string> {
  return (await clientGolang(['decode'], pb)).toString('utf8');
}

/** Length-delimited protobuf read by expfmt's decoder and written back in OpenMetrics by client_golang (exemplars included). */
export async function decodeProtobufToOpenMetricsWithGo(pb: Buffer): Promise<string> {
  return (await clientGolang(['decode-openmetrics'], pb)).toString('utf8');
}

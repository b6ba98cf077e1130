// `npm start [-- demo flags]`: what would stop the demo (another demo on the state directory, addresses in use) is
// reported before the build when a build exists, then the build runs (incremental: seconds when little changed),
// then the demo. The checks are the demo's own (`ctrlmetrics demo --preflight`), run from the existing build.
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const node = process.execPath;
const run = (cmd, argv) => spawnSync(cmd, argv, { stdio: 'inherit' }).status ?? 1;

if (existsSync('packages/cli/dist/cli.js')) {
  const check = spawnSync(node, ['packages/cli/dist/cli.js', 'demo', '--preflight', ...args], { encoding: 'utf8' });
  // a build older than --preflight does not know it: the demo checks again itself after the build
  if (check.status !== 0 && !/unknown option '--preflight'/.test(check.stderr)) {
    process.stderr.write(check.stderr);
    process.exit(check.status ?? 1);
  }
}
console.log('building (incremental) …');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const built = run(npm, ['run', '--silent', 'build']);
if (built !== 0) process.exit(built);
const demo = spawn(node, ['packages/cli/dist/cli.js', 'demo', ...args], { stdio: 'inherit' });
// Ctrl-C reaches the demo from the terminal itself (same process group): a second SIGINT would make it exit at once
process.on('SIGINT', () => undefined);
for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => demo.kill(sig));
demo.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 15) : 1)));

/**
 * Which modules importing one module loads, measured in a fresh Node process: every ES module URL resolved (by a
 * module resolve hook) and every CommonJS file in the require cache, after `import(target)` settles.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const run = promisify(execFile);
const HOOKS = new URL('./fixtures/record-imports-hooks.mjs', import.meta.url).href;

export interface LoadedModules {
  /** Resolved URLs of ES modules (file:, node:, data:), in resolution order, without duplicates. */
  esm: string[];
  /** Absolute paths of the CommonJS modules loaded (the require cache). */
  cjs: string[];
}

/** The child: registers the recording hooks, imports the target, then waits for a sentinel import's report. */
const CHILD = `
import { register, createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const esm = [];
const SENTINEL = 'data:text/javascript,export default "sentinel"';
let sentinelSeen;
const seen = new Promise((r) => (sentinelSeen = r));
port1.on('message', (url) => (url === SENTINEL ? sentinelSeen() : esm.push(url)));
register(process.env.RECORD_HOOKS, { data: { port: port2 }, transferList: [port2] });
await import(process.env.RECORD_TARGET);
await import(SENTINEL);
await seen;
port1.close();
const cjs = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(JSON.stringify({ esm: [...new Set(esm)], cjs }));
`;

/**
 * Imports `target` in a fresh `node` started in `cwd` (with `nodeArgs`, e.g. `--import tsx` for TypeScript
 * sources) and returns what was loaded. `target` is a URL, a file path (absolute or `./`), or a bare specifier
 * resolved from `cwd` as an application there would resolve it.
 */
export async function loadedModules(
  target: string,
  nodeArgs: string[] = [],
  cwd = process.cwd(),
): Promise<LoadedModules> {
  const url = /^[a-z]+:/.test(target) || !/^[./]/.test(target) ? target : pathToFileURL(target).href;
  const { stdout } = await run(process.execPath, [...nodeArgs, '--input-type=module', '-e', CHILD], {
    cwd,
    env: { ...process.env, NODE_OPTIONS: '', RECORD_HOOKS: HOOKS, RECORD_TARGET: url },
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as LoadedModules;
}

/** Repository-relative paths of the file: URLs and paths in `list` (others dropped), for readable assertions. */
export function relativeTo(root: string, list: readonly string[]): string[] {
  const base = root.endsWith('/') ? root : `${root}/`;
  return list
    .map((u) => (u.startsWith('file:') ? fileURLToPath(u) : u))
    .filter((p) => p.startsWith(base))
    .map((p) => p.slice(base.length));
}

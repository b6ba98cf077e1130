/**
 * The prom-client the application imports may be another copy than the one ctrlmetrics imports (another version,
 * a second install of the same one, or its renamed successor `@prometheus-io/client`); each copy has its own
 * default registry, and metrics created with the application's would be missing from `/metrics` without a word.
 * This finds the copies the application resolves — from its entry script and from the working directory, as
 * Node resolves them — and includes their default registries in the global registry. A copy found but not
 * usable is reported, so that the loss is never silent; `registerPromClientRegistry` covers copies no resolution
 * reaches (e.g. one nested inside another package).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isPromRegistry } from './foreign.js';
import { registry as globalRegistry, type Registry } from './registry.js';

/** The client libraries whose default registries are looked for. */
export const PROM_CLIENT_MODULES = ['prom-client', '@prometheus-io/client'] as const;

/** A copy of a prom-client library the application resolves. */
export interface PromClientCopy {
  module: (typeof PROM_CLIENT_MODULES)[number];
  /** The package directory (real path). */
  dir: string;
  version: string;
  /** Its default registry is now collected with the global registry. */
  included: boolean;
  /** Why it could not be included. */
  reason?: string;
}

/** The package directory of `id` that Node's resolution reaches from `fromDir` (nearest `node_modules/<id>`). */
function packageDirFrom(fromDir: string, id: string): string | undefined {
  let dir = resolve(fromDir);
  for (;;) {
    const candidate = join(dir, 'node_modules', id);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

interface PackageJson {
  version?: string;
  main?: string;
  exports?: unknown;
}

/** The file `import(id)` loads from a package directory: `exports` (import/node/default conditions) or `main`. */
function entryOf(dir: string, pkg: PackageJson): string {
  const pick = (e: unknown): string | undefined => {
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && !Array.isArray(e)) {
      const o = e as Record<string, unknown>;
      if ('.' in o) return pick(o['.']);
      for (const cond of ['node', 'import', 'default', 'require']) if (cond in o) return pick(o[cond]);
    }
    return undefined;
  };
  return join(dir, pick(pkg.exports) ?? pkg.main ?? 'index.js');
}

/** The directory of the prom-client ctrlmetrics itself imports. */
function ownPromClientDir(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('prom-client');
    let dir = dirname(entry);
    while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
    return realpathSync(dir);
  } catch {
    return undefined;
  }
}

/** Where the application's own imports resolve from: its entry script's directory and the working directory. */
function applicationDirs(): string[] {
  const dirs = [process.cwd()];
  if (process.argv[1]) {
    try {
      dirs.unshift(dirname(realpathSync(process.argv[1])));
    } catch {
      // not a file (e.g. `node -e`)
    }
  }
  return [...new Set(dirs)];
}

/**
 * Finds the prom-client copies (and `@prometheus-io/client`) the application resolves other than ctrlmetrics'
 * own, and includes their default registries in `into` (the global registry by default).
 */
export async function includePromClientCopies(
  opts: { from?: string[]; into?: Registry } = {},
): Promise<PromClientCopy[]> {
  const own = ownPromClientDir();
  const into = opts.into ?? globalRegistry;
  const seen = new Set<string>(own ? [own] : []);
  const copies: PromClientCopy[] = [];
  for (const module of PROM_CLIENT_MODULES) {
    for (const from of opts.from ?? applicationDirs()) {
      const dir = packageDirFrom(from, module);
      if (!dir || seen.has(dir)) continue;
      seen.add(dir);
      const copy: PromClientCopy = { module, dir, version: 'unknown', included: false };
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
        copy.version = pkg.version ?? 'unknown';
        const mod = (await import(pathToFileURL(entryOf(dir, pkg)).href)) as {
          register?: unknown;
          default?: { register?: unknown };
        };
        const reg = mod.register ?? mod.default?.register;
        if (!isPromRegistry(reg)) throw new Error('it exports no default registry (`register`)');
        into.includePromClientRegistry(reg, `the default registry of ${module} ${copy.version} at ${dir}`);
        copy.included = true;
      } catch (err) {
        copy.reason = err instanceof Error ? err.message : String(err);
      }
      copies.push(copy);
    }
  }
  return copies;
}

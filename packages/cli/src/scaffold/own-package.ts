/**
 * The ctrlmetrics packages that are running `init` — the runtime (`ctrlmetrics`), the embedded authority
 * (`@ctrlmetrics/envtest`) and this CLI (`@ctrlmetrics/cli`) — and packing them into a new project's `vendor/`
 * folder, so the project installs exactly these versions without any registry holding them.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaffoldError } from './errors.js';

export interface OwnPackage {
  /** the directory holding its package.json (undefined when not found: a bundled copy) */
  dir: string | undefined;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** The CLI's package name. */
const CLI = '@ctrlmetrics/cli';

/** This CLI's package.json, found upward from this file (src/scaffold under tsx, dist/src/scaffold when built). */
export function ownPackage(): OwnPackage {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const f = join(dir, 'package.json');
    if (existsSync(f)) {
      const pkg = JSON.parse(readFileSync(f, 'utf8')) as {
        name?: string;
        version: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      if (pkg.name === CLI)
        return {
          dir,
          version: pkg.version,
          dependencies: pkg.dependencies ?? {},
          devDependencies: pkg.devDependencies ?? {},
        };
    }
    dir = dirname(dir);
  }
  return { dir: undefined, version: '0.1.0', dependencies: {}, devDependencies: {} };
}

/** Folder of a generated project that holds the packed packages. */
export const VENDOR_DIR = 'vendor';

/** The packages a project takes, as they are named, and the file a built one holds. */
export const VENDORED_PACKAGES = [
  { name: 'ctrlmetrics', built: 'dist/src/index.js' },
  { name: '@ctrlmetrics/envtest', built: 'dist/src/index.js' },
  { name: CLI, built: 'dist/cli.js' },
] as const;

/** The name of a package: one of {@link VENDORED_PACKAGES}. */
export type VendoredPackage = (typeof VENDORED_PACKAGES)[number]['name'];

/** The tarball `npm pack` writes for `name` at `version` (`@scope/x` → `scope-x-<version>.tgz`). */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

const ALTERNATIVE = 'or pass --ctrlmetrics-version <spec> (a registry version or a file: path of the packed runtime)';

/** Where a package the CLI runs with is installed: the CLI's own folder, or the others' as the CLI resolves them. */
function packageDir(name: VendoredPackage): string | undefined {
  if (name === CLI) return ownPackage().dir;
  try {
    return dirname(fileURLToPath(import.meta.resolve(`${name}/package.json`)));
  } catch {
    return undefined;
  }
}

/**
 * Packs each of the running packages with `npm pack` (the files a publish would hold, lifecycle scripts off: they
 * are already built) into `destDir`, and returns the tarballs' file names by package name.
 */
export async function packOwnPackages(destDir: string): Promise<Record<VendoredPackage, string>> {
  const out = {} as Record<VendoredPackage, string>;
  for (const { name, built } of VENDORED_PACKAGES) {
    const dir = packageDir(name);
    if (!dir)
      throw new ScaffoldError(`cannot find the running ${name} package to copy into the project; ${ALTERNATIVE}`);
    if (!existsSync(join(dir, built))) {
      throw new ScaffoldError(
        `the running ${name} (${dir}) is not built (no ${built}); run npm run build, ${ALTERNATIVE}`,
      );
    }
    out[name] = await npmPack(name, dir, destDir);
  }
  return out;
}

async function npmPack(name: string, dir: string, destDir: string): Promise<string> {
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', destDir],
      // npm_config_* of an enclosing `npm run`/`npx` (e.g. dry-run) must not change what is packed
      { cwd: dir, timeout: 120_000, maxBuffer: 16 << 20, env: withoutNpmConfig(process.env) },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          reject(new ScaffoldError(`npm is not on PATH, so ${name} cannot be packed into the project; ${ALTERNATIVE}`));
        else if (err)
          reject(new ScaffoldError(`npm pack of ${dir} failed: ${lastLine(stderr || err.message)}; ${ALTERNATIVE}`));
        else resolve(stdout);
      },
    );
  });
  let filename: unknown;
  try {
    filename = (JSON.parse(out) as Array<{ filename?: unknown }>)[0]?.filename;
  } catch {
    // handled below
  }
  if (typeof filename !== 'string' || !existsSync(join(destDir, filename))) {
    throw new ScaffoldError(`npm pack of ${dir} did not say which tarball it wrote; ${ALTERNATIVE}`);
  }
  return filename;
}

function withoutNpmConfig(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_config_/i.test(k)));
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines[lines.length - 1] ?? 'no output';
}

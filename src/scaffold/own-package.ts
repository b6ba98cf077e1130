/**
 * The ctrlmetrics package that is running `init`, and packing it into a new project's `vendor/` folder, so the
 * project installs exactly this version without any registry holding it.
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
  devDependencies: Record<string, string>;
}

/** This package's package.json, found upward from this file (src/scaffold under tsx, dist/src/scaffold when built). */
export function ownPackage(): OwnPackage {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const f = join(dir, 'package.json');
    if (existsSync(f)) {
      const pkg = JSON.parse(readFileSync(f, 'utf8')) as {
        name?: string;
        version: string;
        devDependencies?: Record<string, string>;
      };
      if (pkg.name === 'ctrlmetrics') return { dir, version: pkg.version, devDependencies: pkg.devDependencies ?? {} };
    }
    dir = dirname(dir);
  }
  return { dir: undefined, version: '0.1.0', devDependencies: {} };
}

/** Folder of a generated project that holds the packed ctrlmetrics. */
export const VENDOR_DIR = 'vendor';

const ALTERNATIVE = 'or pass --ctrlmetrics-version <spec> (a registry version, a git URL or file:<path>)';

/**
 * Packs the running ctrlmetrics with `npm pack` (the files a publish would hold, lifecycle scripts off: the
 * package is already built) into `destDir`, and returns the tarball's file name.
 */
export async function packOwnPackage(destDir: string): Promise<string> {
  const own = ownPackage();
  if (!own.dir)
    throw new ScaffoldError(`cannot find the running ctrlmetrics package to copy into the project; ${ALTERNATIVE}`);
  if (!existsSync(join(own.dir, 'dist/src/index.js')) || !existsSync(join(own.dir, 'dist/cli.js'))) {
    throw new ScaffoldError(
      `the running ctrlmetrics (${own.dir}) is not built (no dist/); run npm run build there, ${ALTERNATIVE}`,
    );
  }
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', destDir],
      // npm_config_* of an enclosing `npm run`/`npx` (e.g. dry-run) must not change what is packed
      { cwd: own.dir, timeout: 120_000, maxBuffer: 16 << 20, env: withoutNpmConfig(process.env) },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          reject(
            new ScaffoldError(`npm is not on PATH, so ctrlmetrics cannot be packed into the project; ${ALTERNATIVE}`),
          );
        else if (err)
          reject(
            new ScaffoldError(`npm pack of ${own.dir} failed: ${lastLine(stderr || err.message)}; ${ALTERNATIVE}`),
          );
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
    throw new ScaffoldError(`npm pack of ${own.dir} did not say which tarball it wrote; ${ALTERNATIVE}`);
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

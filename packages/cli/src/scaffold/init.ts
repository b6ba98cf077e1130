/**
 * `ctrlmetrics init`: renders every template, writes them to a temporary directory next to the target and only
 * then moves them into place, so a failure leaves nothing half-written.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile, rmdir } from 'node:fs/promises';
import { dirname, join, resolve, basename } from 'node:path';
import { ScaffoldError } from './errors.js';
import { formatTypeScript } from './format.js';
import { PRETTIER_OPTIONS } from './templates/project-hygiene.js';
import { VENDORED_PACKAGES, VENDOR_DIR, ownPackage, packOwnPackages, tarballName } from './own-package.js';
import { domainProblem, projectNameProblem } from './names.js';
import type { ProjectParams } from './templates/params.js';
import { configDefault } from './templates/config-default.js';
import { configRbac } from './templates/config-rbac.js';
import { configManager } from './templates/config-manager.js';
import { configPrometheus } from './templates/config-prometheus.js';
import { configCertmanager } from './templates/config-certmanager.js';
import { configNetworkPolicy } from './templates/config-network-policy.js';
import { configGrafana } from './templates/config-grafana.js';
import { configSharding } from './templates/config-sharding.js';
import { sharderFiles } from './templates/sharder.js';
import { projectFiles, type ToolVersions } from './templates/project.js';
import { LAYOUT, PROJECT_FILE, renderProjectFile } from './project-file.js';

/** Entries an otherwise empty directory may hold (a fresh `git init`). */
const IGNORED_ENTRIES = new Set(['.git', '.DS_Store']);

export { ScaffoldError };

/** The options of `ctrlmetrics init` (`initProject`). */
export interface InitOptions {
  projectName: string;
  /** default `my.domain` (as kubebuilder) */
  domain?: string;
  /** target directory (default: the current directory) */
  dir?: string;
  /** overwrite the generated files of an existing project */
  force?: boolean;
  /**
   * npm spec of the ctrlmetrics dependency: a registry version or range, or `file:<path>` of its packed tarball
   * (`@ctrlmetrics/envtest` and `@ctrlmetrics/cli` follow it: the same version, or their tarballs beside it).
   * Default: the running packages, packed into `vendor/` (`vendor/ctrlmetrics-<version>.tgz`, …) and referenced as
   * `file:vendor/…`, so the project installs without any registry holding this version.
   */
  ctrlmetricsVersion?: string;
  /** Several API groups of the project's own, each in its folder (kubebuilder's `--multigroup`). */
  multigroup?: boolean;
}

/** The version of the ctrlmetrics packages this CLI belongs to. */
export function ctrlmetricsPackageVersion(): string {
  return ownPackage().version;
}

/** Renders every file of a new project (path relative to the project root → content). */
export function renderProject(params: ProjectParams, multigroup = false): Record<string, string> {
  const own = ownPackage();
  const dev = own.devDependencies;
  const tools: ToolVersions = {
    typescript: dev.typescript ?? '5.9.3',
    typesNode: dev['@types/node'] ?? '20.19.25',
    eslint: dev.eslint ?? '^10.16.0',
    eslintJs: dev['@eslint/js'] ?? '^10.0.1',
    typescriptEslint: dev['typescript-eslint'] ?? '^8.74.0',
    // the one the CLI formats the generated code with
    prettier: own.dependencies.prettier ?? '^3.10.2',
  };
  return {
    ...projectFiles(params, tools),
    ...configDefault(params),
    ...configRbac(params),
    ...configManager(params),
    ...configPrometheus(params),
    ...configCertmanager(params),
    ...configNetworkPolicy(params),
    ...configGrafana(params),
    ...configSharding(params),
    ...sharderFiles(params),
    [PROJECT_FILE]: renderProjectFile({
      cliVersion: ctrlmetricsPackageVersion(),
      domain: params.domain,
      layout: [LAYOUT],
      ...(multigroup ? { multigroup: true } : {}),
      projectName: params.projectName,
      version: '3',
    }),
  };
}

/** A file-system error in a few words (for one-line CLI errors). */
export function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS') return 'permission denied';
  if (e.code === 'ENOTDIR') return 'a parent path is not a directory';
  if (e.code === 'EISDIR') return 'a directory is in the way';
  if (e.code === 'ENOSPC') return 'no space left on the device';
  return e.message.split('\n')[0];
}

/** Best-effort cleanup after a failure (the original error is what the user needs to see). */
async function removeQuietly(path: string | undefined): Promise<void> {
  if (!path) return;
  try {
    await rm(path, { recursive: true, force: true });
  } catch {
    // nothing was created there, or it cannot be removed either
  }
}

/** Validates the options and generates the project. Returns the absolute target directory and the files written. */
export async function initProject(opts: InitOptions): Promise<{ dir: string; files: string[] }> {
  const nameProblem = projectNameProblem(opts.projectName ?? '');
  if (nameProblem) throw new ScaffoldError(nameProblem);
  const domain = opts.domain ?? 'my.domain';
  const dProblem = domainProblem(domain);
  if (dProblem) throw new ScaffoldError(dProblem);

  const target = resolve(opts.dir ?? '.');
  if (existsSync(target) && !statSync(target).isDirectory()) {
    throw new ScaffoldError(`cannot write the project to ${target}: it exists and is not a directory`);
  }
  // The tarballs' names are npm pack's; checked (and fixed) after packing.
  const vendorFiles = opts.ctrlmetricsVersion
    ? []
    : VENDORED_PACKAGES.map(({ name }) => `${VENDOR_DIR}/${tarballName(name, ctrlmetricsPackageVersion())}`);
  const vendorFile = vendorFiles[0];
  const files = renderProject(
    {
      projectName: opts.projectName,
      domain,
      ctrlmetricsVersion: opts.ctrlmetricsVersion ?? `file:${vendorFile}`,
    },
    opts.multigroup === true,
  );
  // formatted as the project's lint checks it (.prettierrc.json, which the files include)
  await formatTypeScript(files, PRETTIER_OPTIONS);
  const paths = [...Object.keys(files), ...vendorFiles].sort();
  if (!opts.force) {
    const clash = paths.filter((p) => existsSync(join(target, p)));
    if (clash.length > 0) {
      throw new ScaffoldError(
        `${target} already contains a project (${clash.slice(0, 3).join(', ')}${clash.length > 3 ? ', …' : ''}); pass --force to overwrite the generated files`,
      );
    }
    const others = existsSync(target)
      ? readdirSync(target)
          .filter((n) => !IGNORED_ENTRIES.has(n))
          .sort()
      : [];
    if (others.length > 0) {
      throw new ScaffoldError(
        `${target} is not empty (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}); choose a new or empty directory with --dir, or pass --force to add the project to it (files init does not generate are left alone)`,
      );
    }
  }

  // Create missing parents (remembering the first one, to remove it again on failure).
  let firstCreated: string | undefined;
  const missing: string[] = [];
  let probe = target;
  while (!existsSync(probe)) {
    firstCreated = probe;
    missing.unshift(probe);
    probe = dirname(probe);
  }
  let staging: string | undefined;
  try {
    // One level at a time: Node 20's recursive mkdir spins forever on file systems that answer ENOENT to every
    // mkdir (e.g. /proc), instead of failing.
    for (const dir of missing) await mkdir(dir);
    const prefix = `.${basename(target) || 'project'}.ctrlmetrics-init-`;
    // Next to the target (same file system, so the final renames are atomic); inside it if the parent is read-only.
    staging = await mkdtemp(join(dirname(target), prefix)).catch(() => mkdtemp(join(target, prefix)));
    // mkdtemp makes it private (0700); it becomes the project directory when the target is new
    await chmod(staging, 0o755);
    for (const p of paths) {
      const f = join(staging, p);
      await mkdir(dirname(f), { recursive: true });
      if (vendorFiles.includes(p)) {
        // all three at the first: npm pack writes them into the folder
        if (p === vendorFiles.toSorted()[0]) {
          const packed = await packOwnPackages(dirname(f));
          for (const [i, { name }] of VENDORED_PACKAGES.entries()) {
            const want = join(staging, vendorFiles[i]);
            if (join(dirname(f), packed[name]) !== want) await rename(join(dirname(f), packed[name]), want);
            await chmod(want, 0o644);
          }
        }
      } else {
        await writeFile(f, files[p], { mode: 0o644 });
      }
    }
  } catch (err) {
    await removeQuietly(staging);
    await removeQuietly(firstCreated);
    if (err instanceof ScaffoldError) throw err;
    throw new ScaffoldError(`cannot write the project to ${target}: ${describeFsError(err)}`);
  }

  const moved: string[] = [];
  try {
    if (dirname(staging) !== target && firstCreated === target) {
      // A directory we just created: one rename makes the whole project appear at once. (Never for an existing
      // directory: replacing it would leave a shell whose working directory it is in a deleted directory.)
      await rmdir(target);
      await rename(staging, target);
      staging = undefined;
    } else {
      for (const p of paths) {
        const to = join(target, p);
        const existed = existsSync(to);
        await mkdir(dirname(to), { recursive: true });
        await rename(join(staging, p), to);
        if (!existed) moved.push(to);
      }
    }
  } catch (err) {
    // take back what this run added (files overwritten with --force cannot be restored)
    for (const f of moved) await removeQuietly(f);
    throw new ScaffoldError(`cannot move the project into ${target}: ${describeFsError(err)}`);
  } finally {
    await removeQuietly(staging);
  }
  return { dir: target, files: paths };
}

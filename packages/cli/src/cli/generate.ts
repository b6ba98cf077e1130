/**
 * `ctrlmetrics generate [crd|rbac|webhook]`: controller-gen's `make manifests` for TypeScript — the CRDs of the API
 * types under `--paths` into `--output-dir`, the manager's role from `+kubebuilder:rbac` markers, the webhook
 * configurations from `+kubebuilder:webhook` markers; `generate types`, TypeScript types from another project's CRDs.
 */
import type { Command } from 'commander';
import { relative } from 'node:path';
import { CliError } from './errors.js';

const CRD_PATHS = 'api';
const RBAC_PATHS = 'src';
const CRD_DIR = 'config/crd/bases';
const ROLE_FILE = 'config/rbac/role.yaml';
const WEBHOOK_PATHS = 'src';
const WEBHOOK_FILE = 'config/webhook/manifests.yaml';

/** Go's `dir/...` (a folder and everything below) is a folder here. */
function pathsOf(list: string[] | undefined, fallback: string): string[] {
  return (list?.length ? list : [fallback]).flatMap((p) => p.split(',')).map((p) => p.replace(/\/\.\.\.$/, '') || '.');
}

function report(file: string, changed: boolean): void {
  process.stdout.write(`${relative(process.cwd(), file)} ${changed ? 'written' : 'unchanged'}\n`);
}

async function run<T>(work: () => Promise<T>): Promise<T> {
  const { MarkerError } = await import('../generate/index.js');
  try {
    return await work();
  } catch (err) {
    if (
      err instanceof MarkerError ||
      (err instanceof Error && /no such file or directory|no TypeScript sources|npm install/.test(err.message))
    )
      throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
}

/** controller-gen's `crd:maxDescLen=N`: a whole number of bytes, 0 or more. */
function maxDescLenOf(v: string): number {
  if (!/^\d+$/.test(v))
    throw new CliError(
      `--max-desc-len takes a whole number of bytes (0 removes descriptions); got ${JSON.stringify(v)}`,
    );
  return Number(v);
}

async function crd(flags: { paths?: string[]; outputDir?: string; maxDescLen?: string }): Promise<void> {
  const { writeCrds } = await import('../generate/index.js');
  const maxDescLen = flags.maxDescLen === undefined ? undefined : maxDescLenOf(flags.maxDescLen);
  const written = await run(() =>
    writeCrds({ paths: pathsOf(flags.paths, CRD_PATHS), outputDir: flags.outputDir ?? CRD_DIR, maxDescLen }),
  );
  if (written.length === 0)
    process.stderr.write('no API kinds found (an exported interface with apiVersion, kind and metadata: ObjectMeta)\n');
  for (const w of written) report(w.file, w.changed);
}

async function rbac(flags: { paths?: string[]; output?: string; roleName?: string }): Promise<void> {
  const { writeRoles } = await import('../generate/index.js');
  const w = await run(() =>
    writeRoles({
      paths: pathsOf(flags.paths, RBAC_PATHS),
      output: flags.output ?? ROLE_FILE,
      roleName: flags.roleName,
    }),
  );
  if (!w) process.stderr.write('no +kubebuilder:rbac markers found: role not written\n');
  else report(w.file, w.changed);
}

async function webhook(flags: { paths?: string[]; output?: string }, quiet = false): Promise<void> {
  const { writeWebhooks } = await import('../generate/index.js');
  const w = await run(() =>
    writeWebhooks({ paths: pathsOf(flags.paths, WEBHOOK_PATHS), output: flags.output ?? WEBHOOK_FILE }),
  );
  if (!w) {
    if (!quiet) process.stderr.write('no +kubebuilder:webhook markers found: webhook configurations not written\n');
  } else report(w.file, w.changed);
}

const TYPES_DIR = 'src/api/external';

async function types(flags: { from?: string[]; out?: string }): Promise<void> {
  const { writeTypesFromCrds, TypesError } = await import('../generate/index.js');
  if (!flags.from?.length)
    throw new CliError('generate types needs --from <crd.yaml or directory> (repeatable): the CRDs to read');
  try {
    const written = await writeTypesFromCrds({
      from: flags.from.flatMap((f) => f.split(',')),
      out: flags.out ?? TYPES_DIR,
    });
    if (written.length === 0) process.stderr.write('no served CRD versions found: no types written\n');
    for (const w of written) report(w.file, w.changed);
  } catch (err) {
    if (err instanceof TypesError) throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
}

const MAX_DESC_LEN_HELP =
  "cut the CRDs' descriptions to this many bytes, 0 to drop them (controller-gen's crd:maxDescLen; default: kept whole)";

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command): void {
  const generate = program
    .command('generate')
    .description(
      'Generate CRDs from your API types and the manager role from +kubebuilder:rbac markers (controller-gen for TypeScript)',
    )
    .option('--crd-paths <dir>', `API sources for the CRDs (repeatable; default ${CRD_PATHS})`, collect)
    .option('--rbac-paths <dir>', `sources with +kubebuilder:rbac markers (repeatable; default ${RBAC_PATHS})`, collect)
    .option(
      '--webhook-paths <dir>',
      `sources with +kubebuilder:webhook markers (repeatable; default ${WEBHOOK_PATHS}; nothing written without markers)`,
      collect,
    )
    .option('--max-desc-len <bytes>', MAX_DESC_LEN_HELP)
    .action(
      async (flags: { crdPaths?: string[]; rbacPaths?: string[]; webhookPaths?: string[]; maxDescLen?: string }) => {
        await crd({ paths: flags.crdPaths, maxDescLen: flags.maxDescLen });
        await rbac({ paths: flags.rbacPaths });
        await webhook({ paths: flags.webhookPaths }, true);
      },
    );
  generate
    .command('crd')
    .description('Write one CustomResourceDefinition per API kind: <group>_<plural>.yaml')
    .option(
      '--paths <dir>',
      `API sources (repeatable, or comma-separated; dir/... as controller-gen; default ${CRD_PATHS})`,
      collect,
    )
    .option('--output-dir <dir>', `where to write the CRDs (default ${CRD_DIR})`)
    .option('--max-desc-len <bytes>', MAX_DESC_LEN_HELP)
    .action(crd);
  generate
    .command('rbac')
    .description("Write the manager's ClusterRole (and Roles) from +kubebuilder:rbac markers")
    .option('--paths <dir>', `sources (repeatable, or comma-separated; default ${RBAC_PATHS})`, collect)
    .option('--output <file>', `the role file (default ${ROLE_FILE})`)
    .option('--role-name <name>', 'name of the role (default manager-role)')
    .action(rbac);
  generate
    .command('types')
    .description(
      "Write TypeScript types from CustomResourceDefinitions (another project's kinds): <out>/<group>/<version>/<kind>-types.ts",
    )
    .option('--from <file>', 'a CRD file or a directory of them (repeatable, or comma-separated)', collect)
    .option('--out <dir>', `where to write the types (default ${TYPES_DIR})`)
    .action(types);
  generate
    .command('webhook')
    .description('Write the Mutating/ValidatingWebhookConfigurations from +kubebuilder:webhook markers')
    .option('--paths <dir>', `sources (repeatable, or comma-separated; default ${WEBHOOK_PATHS})`, collect)
    .option('--output <file>', `the configurations file (default ${WEBHOOK_FILE})`)
    .action((flags: { paths?: string[]; output?: string }) => webhook(flags));
  generate
    .command('helm')
    .description(
      "Write the project's Helm chart (dist/chart/) from its kustomize output; files you edited stay unless --force",
    )
    .option('--dir <dir>', 'project directory', '.')
    .option('--force', 'overwrite the chart files you edited')
    .action((flags: { dir: string; force?: boolean }) => helm(flags.dir, flags.force === true));
}

/** `generate helm` and `edit --enable helm`: the chart written or refreshed, and what changed, one line each. */
export async function helm(dir: string, force: boolean): Promise<void> {
  const { generateHelmChart } = await import('../scaffold/helm.js');
  const { ScaffoldError } = await import('../scaffold/errors.js');
  try {
    const r = await generateHelmChart(dir, { force });
    const rel = relative(process.cwd(), r.dir) || '.';
    for (const f of r.written) process.stdout.write(`${rel}/${f} written\n`);
    for (const f of r.removed) process.stdout.write(`${rel}/${f} removed\n`);
    if (!r.written.length && !r.removed.length) process.stdout.write(`${rel}: no changes\n`);
  } catch (err) {
    if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
}

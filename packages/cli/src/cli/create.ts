/**
 * `ctrlmetrics create api`: kubebuilder's next step after `init` — a new kind with its controller, test, sample,
 * roles and kustomizations, registered in src/main.ts; then the manifests generated (`--make=false` skips it).
 */
import type { Command } from 'commander';
import { relative } from 'node:path';
import { CliError, UsageError } from './errors.js';
import { ScaffoldError } from '../scaffold/errors.js';
import { parseGoBool } from 'ctrlmetrics/log';

interface CreateApiFlags {
  group?: string;
  version?: string;
  kind?: string;
  namespaced?: boolean | string;
  plural?: string;
  resource?: boolean | string;
  controller?: boolean | string;
  make?: boolean | string;
  force?: boolean | string;
  dir?: string;
  externalApiPath?: string;
  externalApiDomain?: string;
}

/** A Go-style boolean flag: `--x`, `--x=true|false` (and Go's other spellings). */
function goBool(name: string, v: boolean | string | undefined, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v === 'boolean') return v;
  const b = parseGoBool(v);
  if (b === undefined)
    throw new UsageError(
      `invalid argument "${v}" for "--${name}" flag: strconv.ParseBool: parsing "${v}": invalid syntax`,
    );
  return b;
}

/**
 * kubebuilder's flag checks of `create api|webhook`: a flag whose value is the next flag (--group --version v1) is
 * "flag present but empty"; --kind and --version are required; nothing else may follow.
 */
function checkResourceFlags(
  flags: { group?: string; version?: string; kind?: string; plural?: string },
  cmd: Command,
  command: string,
): void {
  for (const name of ['group', 'version', 'kind', 'plural'] as const) {
    const v = flags[name];
    if (typeof v === 'string' && v.trim().startsWith('-')) throw new CliError(`${name} flag present but empty`);
  }
  if (cmd.args.length) throw new UsageError(`unknown command "${cmd.args[0]}" for "ctrlmetrics create ${command}"`);
  if (flags.version === undefined || flags.kind === undefined) {
    const missing = [flags.kind === undefined ? '"kind"' : '', flags.version === undefined ? '"version"' : '']
      .filter(Boolean)
      .join(', ');
    throw new UsageError(`required flag(s) ${missing} not set`);
  }
}

async function createApiAction(flags: CreateApiFlags, cmd: Command): Promise<void> {
  const { createApi } = await import('../scaffold/create-api.js');
  checkResourceFlags(flags, cmd, 'api');
  const make = goBool('make', flags.make, true);
  let result;
  try {
    result = await createApi({
      dir: flags.dir,
      group: flags.group,
      version: flags.version,
      kind: flags.kind,
      namespaced: goBool('namespaced', flags.namespaced, true),
      plural: flags.plural,
      resource: goBool('resource', flags.resource, true),
      controller: goBool('controller', flags.controller, true),
      force: goBool('force', flags.force, false),
      externalApiPath: flags.externalApiPath,
      externalApiDomain: flags.externalApiDomain,
    });
  } catch (err) {
    if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
  for (const f of result.written) process.stdout.write(`${f} written\n`);
  for (const f of result.skipped) process.stdout.write(`${f} exists, skipped\n`);
  for (const n of result.notes) process.stdout.write(`note: ${n}\n`);
  if ((result.apiCreated || result.builtin) && make) {
    const { writeCrds, writeRoles, MarkerError } = await import('../generate/index.js');
    try {
      // a built-in kind has no CRD of the project's: only the role changes (its RBAC markers)
      const crds = result.apiCreated
        ? await writeCrds({ paths: ['src'], outputDir: 'config/crd/bases', root: result.dir })
        : [];
      const role = await writeRoles({ paths: ['src'], output: 'config/rbac/role.yaml', root: result.dir });
      for (const w of [...crds, ...(role ? [role] : [])])
        process.stdout.write(`${relative(result.dir, w.file)} ${w.changed ? 'written' : 'unchanged'}\n`);
    } catch (err) {
      if (!(err instanceof MarkerError) && !(err instanceof Error && /npm install/.test(err.message))) throw err;
      throw new CliError(
        `the API was scaffolded, but the manifests could not be generated: ${err.message}\nfix it, then run: npm run manifests`,
      );
    }
  }
  if (result.builtin) {
    const controller = relative(
      process.cwd(),
      `${result.dir}/src/controllers/${result.builtin.kind.toLowerCase()}-controller.ts`,
    );
    const install = result.written.includes('package.json') ? 'install its types (kubernetes-types) and ' : '';
    if (result.builtin.external) {
      process.stdout.write(
        `Next: implement the ${result.builtin.kind} controller in ${controller}; regenerate the role after changing its markers with:\n$ npm run manifests\n`,
      );
      return;
    }
    process.stdout.write(
      `Next: implement the ${result.builtin.kind} controller in ${controller}; ${install}regenerate the role after changing its markers with:\n${install ? '$ npm install\n' : ''}$ npm run manifests\n`,
    );
    return;
  }
  const apiDir = `src/api/${result.resource.multigroup && result.resource.group ? `${result.resource.group}/` : ''}${result.resource.version}`;
  process.stdout.write(
    `Next: implement your new API in ${relative(process.cwd(), `${result.dir}/${apiDir}`) || '.'} and generate the manifests (CRDs, role) with:\n$ npm run manifests\n`,
  );
}

interface CreateWebhookFlags {
  group?: string;
  version?: string;
  kind?: string;
  defaulting?: boolean | string;
  programmaticValidation?: boolean | string;
  conversion?: boolean | string;
  spoke?: string[];
  make?: boolean | string;
  force?: boolean | string;
  dir?: string;
}

async function createWebhookAction(flags: CreateWebhookFlags, cmd: Command): Promise<void> {
  const { createWebhook } = await import('../scaffold/create-webhook.js');
  checkResourceFlags(flags, cmd, 'webhook');
  let result;
  try {
    result = await createWebhook({
      dir: flags.dir,
      group: flags.group,
      version: flags.version,
      kind: flags.kind,
      defaulting: goBool('defaulting', flags.defaulting, false),
      programmaticValidation: goBool('programmatic-validation', flags.programmaticValidation, false),
      conversion: goBool('conversion', flags.conversion, false),
      spoke: flags.spoke?.flatMap((v) => v.split(',')),
      force: goBool('force', flags.force, false),
    });
  } catch (err) {
    if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
  for (const f of result.written) process.stdout.write(`${f} written\n`);
  if (goBool('make', flags.make, true)) {
    const { writeWebhooks, MarkerError } = await import('../generate/index.js');
    try {
      const w = await writeWebhooks({ paths: ['src'], output: 'config/webhook/manifests.yaml', root: result.dir });
      if (w) process.stdout.write(`${relative(result.dir, w.file)} ${w.changed ? 'written' : 'unchanged'}\n`);
    } catch (err) {
      if (!(err instanceof MarkerError) && !(err instanceof Error && /npm install/.test(err.message))) throw err;
      throw new CliError(
        `the webhook was scaffolded, but config/webhook/manifests.yaml could not be generated: ${err.message}\nfix it, then run: npm run manifests`,
      );
    }
  }
  if (result.conversionCreated && goBool('make', flags.make, true)) {
    // the hub's +kubebuilder:storageversion moved: the CRD says which version is stored
    const { writeCrds } = await import('../generate/index.js');
    for (const w of await writeCrds({ paths: ['src'], outputDir: 'config/crd/bases', root: result.dir }))
      process.stdout.write(`${relative(result.dir, w.file)} ${w.changed ? 'written' : 'unchanged'}\n`);
  }
  const webhookDir = `src/webhooks/${result.resource.multigroup && result.resource.group ? `${result.resource.group}/` : ''}${result.resource.version}`;
  process.stdout.write(
    `Next: implement your new Webhook in ${relative(process.cwd(), `${result.dir}/${webhookDir}`) || '.'} and generate the manifests with:\n$ npm run manifests\n`,
  );
}

export function register(program: Command): void {
  const create = program
    .command('create')
    .description('Scaffold a Kubernetes API or its webhooks (create api, create webhook)');
  create
    .command('api')
    .description(
      'Scaffold a new kind: its types, controller and test, sample, roles and kustomizations (kubebuilder create api)',
    )
    .option('--group <group>', 'resource group (with the project domain: <group>.<domain>)')
    .option('--version <version>', 'resource version (e.g. v1alpha1)')
    .option('--kind <kind>', 'resource kind (CamelCase)')
    .option('--plural <plural>', 'resource plural (default: the regular plural of the kind)')
    .option('--namespaced [bool]', 'resource is namespaced (default true)')
    .option('--resource [bool]', 'scaffold the API types (default true)')
    .option('--controller [bool]', 'scaffold the controller (default true)')
    .option('--make [bool]', 'run ctrlmetrics generate afterwards (default true)')
    .option('--force [bool]', 'overwrite the types, controller, its test and the sample when they exist')
    .option(
      '--external-api-path <path>',
      "with --resource=false: the CRD (file or directory) of another project's kind; its types are generated from it",
    )
    .option(
      '--external-api-domain <domain>',
      "with --external-api-path: the domain of the kind's group (default: the project's)",
    )
    .option('--dir <dir>', 'the project directory (default: the current directory)')
    .allowExcessArguments(true)
    .action((flags: CreateApiFlags, cmd: Command) => createApiAction(flags, cmd));
  create
    .command('webhook')
    .description(
      'Scaffold defaulting and validation webhooks for a kind made by create api, with their config/ wiring (kubebuilder create webhook)',
    )
    .option('--group <group>', 'resource group')
    .option('--version <version>', 'resource version')
    .option('--kind <kind>', 'resource kind')
    .option('--defaulting [bool]', 'scaffold a defaulting (mutating) webhook')
    .option('--programmatic-validation [bool]', 'scaffold a validating webhook')
    .option('--conversion [bool]', 'scaffold a conversion webhook: --version is the hub (the storage version)')
    .option(
      '--spoke <versions>',
      'spoke versions of the conversion, comma-separated or repeated (default: every other version of the kind)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('--make [bool]', 'run ctrlmetrics generate webhook afterwards (default true)')
    .option('--force [bool]', 'rewrite the webhook file (and its test) when they exist')
    .option('--dir <dir>', 'the project directory (default: the current directory)')
    .allowExcessArguments(true)
    .action((flags: CreateWebhookFlags, cmd: Command) => createWebhookAction(flags, cmd));
}

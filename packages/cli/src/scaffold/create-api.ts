/**
 * `ctrlmetrics create api`: kubebuilder's `create api` for a ctrlmetrics project — its checks in its order and
 * words, then the kind's types, controller and test, sample, roles and kustomizations written (every file decided
 * before any is written), the controller registered in src/main.ts, the kind recorded in the project file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { formatTypeScript, projectPrettierOptions } from './format.js';
import { dirname, join, resolve } from 'node:path';
import { ScaffoldError } from './errors.js';
import { PROJECT_FILE, readProjectFile, renderProjectFile, type ProjectResource } from './project-file.js';
import { pluralOf } from '../generate/crd.js';
import {
  CRD_MARKER,
  SAMPLES_MARKER,
  controllerFile,
  controllerFunction,
  controllerPath,
  controllerTestFile,
  controllerTestPath,
  crdFile,
  crdKustomization,
  roleFile,
  roleFiles,
  sampleFile,
  samplePath,
  samplesKustomization,
  hasStorageVersion,
  typesFile,
  typesPath,
  importPath,
  withStorageVersion,
  type ApiResource,
} from './templates/api.js';
import type { ProjectParams } from './templates/params.js';
import { builtinGroupOf, KUBERNETES_TYPES_VERSION, resolveBuiltinKind, type BuiltinKind } from './builtin-kinds.js';
import { builtinSample } from './builtin-samples.js';
import { sampleOfSchema } from './crd-sample.js';
import { crdKinds, toManifestYaml, writeTypesFromCrds, TypesError } from '../generate/index.js';
import {
  builtinControllerFile,
  builtinControllerFunction,
  builtinControllerPath,
  builtinControllerTestFile,
  builtinControllerTestPath,
} from './templates/builtin-controller.js';

export interface CreateApiOptions {
  /** The project directory (default: the current directory). */
  dir?: string;
  group?: string;
  version?: string;
  kind?: string;
  /** Default true; false makes the kind cluster-scoped. */
  namespaced?: boolean;
  plural?: string;
  /** Scaffold the API types (default true). */
  resource?: boolean;
  /** Scaffold the controller (default true). */
  controller?: boolean;
  /** Overwrite the types, controller, its test and the sample instead of failing. */
  force?: boolean;
  /**
   * A kind of another project (kubebuilder's `--external-api-path`): the CRD file, or a directory of CRDs, that
   * defines it; its types are generated from it (`generate types`). Only with `resource: false`.
   */
  externalApiPath?: string;
  /** The domain of that kind's group (`io` for `--group cert-manager`); default the project's domain. */
  externalApiDomain?: string;
}

/** What `create api` did: files written (created or changed), skipped, and whether the types were scaffolded. */
export interface CreateApiResult {
  dir: string;
  resource: ApiResource;
  written: string[];
  skipped: string[];
  apiCreated: boolean;
  /** What the user should know (e.g. which version became the storage version). */
  notes: string[];
  /** Set when the controller is for one of Kubernetes' own kinds (`--resource=false` on a built-in group). */
  builtin?: BuiltinKind;
}

const MAIN = 'src/main.ts';
const IMPORTS_MARKER = '// +ctrlmetrics:scaffold:imports';
const CONTROLLERS_MARKER = '// +ctrlmetrics:scaffold:controllers';
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_TEXT =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL1035_TEXT =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** Go's validation.IsDNS1035Label messages, as kubebuilder prints them (`[…]`). */
function label1035Errors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(v)) errs.push(LABEL1035_TEXT);
  return errs;
}

/** kubebuilder's resource checks, in its order and words (wrapped as `error validating resource: …`). */
function validate(group: string, domain: string, version: string, kind: string, plural: string): void {
  const fail = (m: string) => new ScaffoldError(`error validating resource: ${m}`);
  const qualified = [group, domain].filter(Boolean).join('.');
  if (!qualified) throw fail('group cannot be empty if the domain is empty');
  if (qualified.length > 253 || !DNS1123_SUBDOMAIN.test(qualified))
    throw fail(`either Group or Domain is invalid: [${SUBDOMAIN_TEXT}]`);
  if (!version) throw fail('version cannot be empty');
  if (version.length > 253 || !DNS1123_SUBDOMAIN.test(version))
    throw fail(`version must respect DNS-1123 (was "${version}")`);
  // stricter than kubebuilder: the API server refuses a CRD version that is not a DNS-1035 label (e.g. v1.2)
  if (label1035Errors(version).length)
    throw fail(
      `version "${version}" must be a DNS-1035 label, as the API server requires of CRD versions (e.g. v1, v1alpha1)`,
    );
  if (!kind) throw fail('kind cannot be empty');
  const kindErrs = label1035Errors(kind.toLowerCase());
  if (kindErrs.length) throw fail(`invalid Kind: [${kindErrs.join(', ')}]`);
  if (!/^[A-Z]/.test(kind)) throw fail('invalid Kind: must start with an uppercase character');
  const pluralErrs = label1035Errors(plural);
  if (pluralErrs.length) throw fail(`invalid Plural: [${pluralErrs.join(', ')}]`);
}

/** The flag values as kubebuilder takes them: trimmed; a value starting with `-` means the flag was left empty. */
function flagValue(name: string, v: string | undefined): string {
  const t = (v ?? '').trim();
  if (t.startsWith('-')) throw new ScaffoldError(`${name} flag present but empty`);
  return t;
}

/** Inserts `line` just above `marker` in `text` unless it is already there. */
export function insertAtMarker(text: string, marker: string, line: string, file: string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.trim() === marker);
  if (at < 0)
    throw new ScaffoldError(
      `${file}: the scaffold marker "${marker}" is missing; put it back where new lines go (ctrlmetrics create api inserts them above it)`,
    );
  if (lines.some((l) => l.trim() === line.trim())) return text;
  const indent = /^\s*/.exec(lines[at])![0];
  lines.splice(at, 0, `${indent}${line.trim()}`);
  return lines.join('\n');
}

/** Validates and scaffolds; answers what was written. Generation of the manifests is the caller's next step. */
export async function createApi(opts: CreateApiOptions): Promise<CreateApiResult> {
  const dir = resolve(opts.dir ?? '.');
  const group = flagValue('group', opts.group);
  const version = flagValue('version', opts.version);
  const kind = flagValue('kind', opts.kind);
  const pluralFlag = flagValue('plural', opts.plural);
  const project = readProjectFile(dir);
  if (!existsSync(join(dir, MAIN))) throw new ScaffoldError(`${MAIN} file should present in the root directory`);
  const lowerKind = kind.toLowerCase();
  const regular = pluralOf(lowerKind);
  const plural = pluralFlag || regular;
  validate(group, project.domain, version, kind, plural);

  const withResource = opts.resource !== false;
  const withController = opts.controller !== false;
  const resources = project.resources ?? [];
  const qualifiedGroup = [group, project.domain].filter(Boolean).join('.');
  const existing = resources.find((r) => r.group === group && r.version === version && r.kind === kind);
  if (existing?.api && withResource && !opts.force) throw new ScaffoldError('API resource already exists');
  if ((opts.externalApiPath || opts.externalApiDomain) && withResource) {
    throw new ScaffoldError(
      '--external-api-path and --external-api-domain name a kind of another project: they go with --resource=false',
    );
  }
  if (opts.externalApiDomain && !opts.externalApiPath)
    throw new ScaffoldError('--external-api-domain needs --external-api-path: the CRD that defines the kind');
  if (opts.externalApiPath) {
    const domain = opts.externalApiDomain?.trim() || project.domain;
    return createExternalController(
      dir,
      project,
      { group: [group, domain].filter(Boolean).join('.'), shortGroup: group, domain, version, kind },
      opts.externalApiPath,
      withController,
      opts.force === true,
    );
  }
  // a controller without types is for a kind the project does not define: one of Kubernetes' own (kubebuilder's
  // rule: unless the project already has an API of that group, version and kind)
  if (!withResource && !existing?.api) {
    if (builtinGroupOf(group) !== undefined)
      return createBuiltinController(
        dir,
        project,
        resolveBuiltinKind(group, version, kind),
        withController,
        opts.force === true,
      );
    throw new ScaffoldError(
      `${qualifiedGroup}/${version} ${kind} has no types in this project: drop --resource=false to scaffold them, or name one of Kubernetes' own API groups (core, apps, batch, networking, rbac.authorization, …) for a built-in kind`,
    );
  }
  // only a project's own API types are held to its one group, as kubebuilder checks when it scaffolds them
  if (withResource && !project.multigroup && resources.some((r) => r.api && r.group !== group)) {
    throw new ScaffoldError(
      'multiple groups are not allowed by default, to enable multi-group visit https://kubebuilder.io/migration/multi-group.html (ctrlmetrics edit --multigroup switches this project to the multi-group layout)',
    );
  }

  const r: ApiResource = {
    group,
    qualifiedGroup,
    version,
    kind,
    lowerKind,
    plural,
    irregularPlural: plural !== regular,
    namespaced: opts.namespaced !== false,
    ...(project.multigroup ? { multigroup: true } : {}),
  };
  const params: ProjectParams = { projectName: project.projectName, domain: project.domain, ctrlmetricsVersion: '' };
  const read = (p: string) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined);
  const out = new Map<string, string>();
  const skipped: string[] = [];
  /** New files: an error when they exist (overwritten with --force). */
  const create = (p: string, content: string) => {
    if (read(p) !== undefined && !opts.force) throw new ScaffoldError(`failed to create ${p}: file already exists`);
    out.set(p, content);
  };
  /** Files written once: left alone when they exist (overwritten with --force). */
  const once = (p: string, content: string) => {
    if (read(p) !== undefined && !opts.force) skipped.push(p);
    else out.set(p, content);
  };
  const current = (p: string) => out.get(p) ?? read(p);

  if (withResource) {
    create(typesPath(r), typesFile(r));
    create(samplePath(r), sampleFile(r, params));
    const samples = current('config/samples/kustomization.yaml') ?? samplesKustomization();
    out.set(
      'config/samples/kustomization.yaml',
      insertAtMarker(
        samples,
        SAMPLES_MARKER,
        `- ${samplePath(r).slice('config/samples/'.length)}`,
        'config/samples/kustomization.yaml',
      ),
    );
    const crd = current('config/crd/kustomization.yaml') ?? crdKustomization();
    out.set(
      'config/crd/kustomization.yaml',
      insertAtMarker(crd, CRD_MARKER, `- bases/${crdFile(r)}`, 'config/crd/kustomization.yaml'),
    );
    // the admin/editor/viewer roles are always rewritten, as kubebuilder does
    for (const [i, which] of (['admin', 'editor', 'viewer'] as const).entries())
      out.set(roleFiles(r)[i], roleFile(r, params, which));
    const rbacK = current('config/rbac/kustomization.yaml');
    if (rbacK === undefined)
      throw new ScaffoldError(
        'config/rbac/kustomization.yaml not found: the project is missing the files init generated',
      );
    const names = roleFiles(r).map((f) => f.slice('config/rbac/'.length));
    if (!names.every((n) => rbacK.includes(`- ${n}`))) {
      const block = `# For each CRD, "Admin", "Editor" and "Viewer" roles are scaffolded by default, aiding admins in cluster management.\n# Those roles are not used by the ${project.projectName} itself. You can comment the following lines\n# if you do not want those helpers be installed with your Project.\n${names.map((n) => `- ${n}`).join('\n')}\n`;
      out.set('config/rbac/kustomization.yaml', `${rbacK.endsWith('\n') ? rbacK : `${rbacK}\n`}${block}`);
    }
    const def = current('config/default/kustomization.yaml');
    if (def === undefined)
      throw new ScaffoldError(
        'config/default/kustomization.yaml not found: the project is missing the files init generated',
      );
    if (!/^- \.\.\/crd\s*$/m.test(def)) {
      if (!/^#- \.\.\/crd\s*$/m.test(def))
        throw new ScaffoldError(
          'config/default/kustomization.yaml has no "#- ../crd" line to enable: add "- ../crd" under resources by hand',
        );
      out.set('config/default/kustomization.yaml', def.replace(/^#- \.\.\/crd(\s*)$/m, '- ../crd$1'));
    }
  }
  const notes: string[] = [];
  // another version of the kind: a CRD with several versions stores one of them, which must be marked
  const siblings = resources.filter((x) => x.group === group && x.kind === kind && x.version !== version && x.api);
  if (withResource && siblings.length) {
    const files = siblings.map((x) => typesPath({ ...r, version: x.version }));
    if (!files.some((f) => hasStorageVersion(current(f) ?? ''))) {
      const first = files.find((f) => current(f) !== undefined);
      const marked = first && withStorageVersion(current(first)!, kind, true);
      if (!first || !marked)
        throw new ScaffoldError(
          `${kind} has another version (${siblings.map((x) => x.version).join(', ')}) whose types file has no "export interface ${kind}": mark the version to store with // +kubebuilder:storageversion by hand`,
        );
      out.set(first, marked);
      notes.push(
        `${first}: marked +kubebuilder:storageversion — ${kind} now has ${siblings.length + 1} versions and objects stay stored in this one (create webhook --conversion moves the mark to the hub)`,
      );
    }
  }
  if (withController) {
    create(controllerPath(r), controllerFile(r));
    once(controllerTestPath(r), controllerTestFile(r));
    out.set(MAIN, registerController(current(MAIN)!, controllerFunction(r), controllerPath(r)));
  }

  const entry: ProjectResource = {
    ...(existing ?? {}),
    ...(withResource || existing?.api
      ? { api: { crdVersion: 'v1', ...(r.namespaced ? { namespaced: true } : {}) } }
      : {}),
    ...(withController || existing?.controller ? { controller: true } : {}),
    domain: project.domain,
    group,
    kind,
    path: dirname(typesPath(r)),
    ...(r.irregularPlural ? { plural } : {}),
    version,
  };
  if (!r.irregularPlural) delete entry.plural;
  const others = resources.filter((x) => x !== existing);
  out.set(PROJECT_FILE, renderProjectFile({ ...project, resources: [...others, entry] }));

  await formatTypeScript(out, await projectPrettierOptions(dir));
  const written = await writeFiles(dir, out);
  return { dir, resource: r, written, skipped, apiCreated: withResource, notes };
}

/** src/main.ts with the controller's import and its `mgr.add(...)` at the scaffold markers (once each). */
function registerController(main: string, fn: string, file: string): string {
  const imported = insertAtMarker(main, IMPORTS_MARKER, `import { ${fn} } from '${importPath(MAIN, file)}';`, MAIN);
  return insertAtMarker(imported, CONTROLLERS_MARKER, `mgr.add(${fn}());`, MAIN);
}

/**
 * The controller of a kind whose types come from elsewhere (Kubernetes' own, or another project's CRD), its test
 * (kept when there, unless forced), and its registration in src/main.ts.
 */
function addForeignController(
  out: Map<string, string>,
  read: (p: string) => string | undefined,
  kind: BuiltinKind,
  sample: Record<string, unknown>,
  o: { force: boolean; skipped: string[]; crds?: string[] },
): void {
  const controller = builtinControllerPath(kind);
  if (read(controller) !== undefined && !o.force)
    throw new ScaffoldError(`failed to create ${controller}: file already exists`);
  out.set(controller, builtinControllerFile(kind));
  const testPath = builtinControllerTestPath(kind);
  if (read(testPath) !== undefined && !o.force) o.skipped.push(testPath);
  else out.set(testPath, builtinControllerTestFile(kind, sample, o.crds));
  out.set(MAIN, registerController(read(MAIN)!, builtinControllerFunction(kind), controller));
}

/** Writes the files whose content changed, in path order; answers their paths. */
async function writeFiles(dir: string, out: Map<string, string>): Promise<string[]> {
  const written: string[] = [];
  for (const [p, content] of [...out].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const at = join(dir, p);
    if (existsSync(at) && readFileSync(at, 'utf8') === content) continue;
    await mkdir(dirname(at), { recursive: true });
    await writeFile(at, content);
    written.push(p);
  }
  return written;
}

/**
 * A controller for a built-in kind: the controller and its test, its registration in src/main.ts, the
 * `kubernetes-types` dependency its type comes from, and kubebuilder's PROJECT entry for a core type (the group's
 * short name and domain, the module of its types).
 */
async function createBuiltinController(
  dir: string,
  project: ReturnType<typeof readProjectFile>,
  k: BuiltinKind,
  withController: boolean,
  force: boolean,
): Promise<CreateApiResult> {
  if (!withController)
    throw new ScaffoldError(
      `${k.kind} is a built-in kind of Kubernetes: with --resource=false there is only its controller to scaffold, and --controller=false leaves nothing`,
    );
  const read = (p: string) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined);
  const out = new Map<string, string>();
  const skipped: string[] = [];
  const lowerKind = k.kind.toLowerCase();
  const sample = builtinSample(k.apiVersion, k.kind, `${lowerKind}-sample`, k.namespaced ? 'default' : undefined);
  if (!sample) throw new ScaffoldError(`${k.kind} (${k.apiVersion}) has no sample object to test its controller with`);
  addForeignController(out, read, k, sample, { force, skipped });
  const pkg = withKubernetesTypes(k, read('package.json'));
  if (pkg !== undefined) out.set('package.json', pkg);
  const resources = project.resources ?? [];
  const existing = builtinEntryOf(resources, k);
  const entry: ProjectResource = { ...(existing ?? builtinEntry(k)), controller: true };
  out.set(
    PROJECT_FILE,
    renderProjectFile({ ...project, resources: [...resources.filter((x) => x !== existing), entry] }),
  );
  await formatTypeScript(out, await projectPrettierOptions(dir));
  const written = await writeFiles(dir, out);
  const r: ApiResource = {
    group: k.projectGroup,
    qualifiedGroup: k.group,
    version: k.version,
    kind: k.kind,
    lowerKind,
    plural: k.plural,
    irregularPlural: false,
    namespaced: k.namespaced,
  };
  return { dir, resource: r, written, skipped, apiCreated: false, notes: [], builtin: k };
}

/** The PROJECT entry of a built-in kind, if the project has one. */
export function builtinEntryOf(resources: ProjectResource[], k: BuiltinKind): ProjectResource | undefined {
  return resources.find(
    (x) =>
      !x.api &&
      x.group === k.projectGroup &&
      x.version === k.version &&
      x.kind === k.kind &&
      (x.domain ?? '') === k.projectDomain,
  );
}

/** kubebuilder's PROJECT entry for a core type: the group's short name and domain, the module of its types. */
export function builtinEntry(k: BuiltinKind): ProjectResource {
  return {
    ...(k.projectDomain ? { domain: k.projectDomain } : {}),
    group: k.projectGroup,
    kind: k.kind,
    ...(k.typesModule ? { path: k.typesModule.replace(/\.js$/, '') } : {}),
    version: k.version,
  };
}

/**
 * package.json with `kubernetes-types` among the dependencies when the kind's type comes from it and it is not
 * there yet; undefined when nothing changes.
 */
export function withKubernetesTypes(k: BuiltinKind, pkgText: string | undefined): string | undefined {
  if (!k.typesModule) return undefined;
  if (pkgText === undefined)
    throw new ScaffoldError('package.json not found: the project is missing the files init generated');
  const pkg = JSON.parse(pkgText) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  if (pkg.dependencies?.['kubernetes-types'] || pkg.devDependencies?.['kubernetes-types']) return undefined;
  // types only: nothing of it runs; a dependency, as the project's exported signatures may name its types
  pkg.dependencies = Object.fromEntries(
    Object.entries({ ...pkg.dependencies, 'kubernetes-types': KUBERNETES_TYPES_VERSION }).sort(([a], [b]) =>
      a < b ? -1 : 1,
    ),
  );
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/**
 * A controller for a kind another project's CRD defines (kubebuilder's `--external-api-path`): its types generated
 * from the CRD into src/api/external, the CRD kept in config/crd/external for the tests, the controller and its
 * test (the CRD installed on the authority, an object made from the schema's required fields), and a PROJECT entry
 * marked external.
 */
async function createExternalController(
  dir: string,
  project: ReturnType<typeof readProjectFile>,
  want: { group: string; shortGroup: string; domain: string; version: string; kind: string },
  path: string,
  withController: boolean,
  force: boolean,
): Promise<CreateApiResult> {
  if (!withController)
    throw new ScaffoldError(
      `${want.kind} is another project's kind: with --resource=false there is only its controller to scaffold, and --controller=false leaves nothing`,
    );
  let found;
  try {
    found = crdKinds([path], dir);
  } catch (err) {
    if (err instanceof TypesError) throw new ScaffoldError(err.message);
    throw err;
  }
  const k = found.find((x) => x.group === want.group && x.version === want.version && x.kind === want.kind);
  if (!k) {
    const have = found.map((x) => `${x.group}/${x.version} ${x.kind}`);
    throw new ScaffoldError(
      `${path} defines no ${want.group}/${want.version} ${want.kind}${have.length ? `; it defines ${[...new Set(have)].join(', ')}` : ''} (the group is --group and --external-api-domain)`,
    );
  }
  const lowerKind = want.kind.toLowerCase();
  const typesDir = `src/api/external/${k.group}/${k.version}`;
  const kind: BuiltinKind = {
    group: k.group,
    version: k.version,
    kind: k.kind,
    plural: k.plural,
    namespaced: k.namespaced,
    rbacGroup: k.group,
    projectGroup: want.shortGroup,
    projectDomain: want.domain,
    typesModule: `../api/external/${k.group}/${k.version}/${lowerKind}-types.js`,
    apiVersion: `${k.group}/${k.version}`,
    external: true,
  };
  const crdCopy = `config/crd/external/${k.group}_${k.plural}.yaml`;
  const schema = ((
    k.crd.spec as { versions: Array<{ name: string; schema?: { openAPIV3Schema?: unknown } }> }
  ).versions.find((v) => v.name === k.version)?.schema?.openAPIV3Schema ?? {}) as Record<string, unknown>;
  const sample = {
    apiVersion: kind.apiVersion,
    kind: k.kind,
    metadata: { name: `${lowerKind}-sample`, ...(k.namespaced ? { namespace: 'default' } : {}) },
    ...sampleOfSchema(schema),
  };

  const read = (p: string) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined);
  const out = new Map<string, string>();
  const skipped: string[] = [];
  addForeignController(out, read, kind, sample, { force, skipped, crds: [crdCopy] });
  out.set(crdCopy, toManifestYaml([k.crd]));
  const resources = project.resources ?? [];
  const existing = resources.find(
    (x) => x.external && x.group === want.shortGroup && x.version === k.version && x.kind === k.kind,
  );
  const entry: ProjectResource = {
    controller: true,
    ...(want.domain ? { domain: want.domain } : {}),
    external: true,
    group: want.shortGroup,
    kind: k.kind,
    path: typesDir,
    version: k.version,
  };
  out.set(
    PROJECT_FILE,
    renderProjectFile({ ...project, resources: [...resources.filter((x) => x !== existing), entry] }),
  );
  await formatTypeScript(out, await projectPrettierOptions(dir));
  const written = await writeFiles(dir, out);
  // the types, from the CRD kept in the project
  for (const w of await writeTypesFromCrds({ from: [crdCopy], out: 'src/api/external', root: dir }))
    if (w.changed) written.push(w.file.slice(dir.length + 1));
  const r: ApiResource = {
    group: want.shortGroup,
    qualifiedGroup: k.group,
    version: k.version,
    kind: k.kind,
    lowerKind,
    plural: k.plural,
    irregularPlural: false,
    namespaced: k.namespaced,
  };
  return { dir, resource: r, written, skipped, apiCreated: false, notes: [], builtin: kind };
}

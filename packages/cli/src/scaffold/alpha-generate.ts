/**
 * `ctrlmetrics alpha generate` (kubebuilder's command): re-creates a project from its PROJECT file with today's
 * templates, into a folder of its own, so its user can diff the two and merge. It replays what made the project —
 * `init` with its name, domain and layout, `create api` for each kind (API types, controllers, built-in kinds),
 * `create webhook` for each kind's webhooks, `edit --enable` for the options that are on — then carries the
 * user's code over: the types, controllers, webhooks and their tests, the samples, and every file of the project
 * the templates do not write. The manifests are generated again from the carried code. What the templates write
 * and the user changed (src/main.ts, package.json, …) is the new version, listed to merge by hand; what sits in the
 * generated kustomize tree but is none of the templates' is not carried, and listed.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ScaffoldError } from './errors.js';
import { readProjectFile, setPlugin, type ProjectResource } from './project-file.js';
import { CHART_DIR, HELM_PLUGIN, editedChartFiles, generateHelmChart } from './helm.js';
import { initProject } from './init.js';
import { createApi } from './create-api.js';
import { createWebhook } from './create-webhook.js';
import { editProject, readOptionState, SCAFFOLD_OPTIONS } from './edit.js';

export interface AlphaGenerateOptions {
  /** The project to re-create (default: the current directory). */
  inputDir?: string;
  /** Where the new project goes (default: `<input-dir>-generated` beside it); it must not hold files. */
  outputDir?: string;
  /**
   * The ctrlmetrics dependency of the new project: default the input's when it is a registry version, else the
   * running packages vendored as `init` does.
   */
  ctrlmetricsVersion?: string;
}

export interface AlphaGenerateResult {
  dir: string;
  /** The commands replayed, as one would type them. */
  steps: string[];
  /** The user's files copied into the new project. */
  carried: string[];
  /** Files the templates wrote anew that differ from the project's: merge these by hand. */
  regenerated: string[];
  /** The project's files that were not carried (in config/, which the templates own), and why some steps failed. */
  notCarried: string[];
}

/** Folders never read: installs, builds, the vendored packages, the repository. */
const SKIPPED = new Set(['node_modules', 'dist', 'dist-test', 'vendor', '.git']);

/** The paths whose files are the user's once written: carried over what the templates wrote. */
const USER_CODE = [
  'src/api/',
  'src/controllers/',
  'src/webhooks/',
  'test/controllers/',
  'test/webhooks/',
  'config/samples/',
];

/** What the generators write from the code (npm run manifests). */
const MANIFESTS = ['config/crd/bases/', 'config/rbac/role.yaml', 'config/webhook/manifests.yaml'];

function filesOf(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (SKIPPED.has(name)) continue;
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...filesOf(root, path));
    else if (st.isFile()) out.push(relative(root, path));
  }
  return out;
}

const sameFile = (a: string, b: string): boolean => readFileSync(a).equals(readFileSync(b));

/** The new project's ctrlmetrics spec: the input's registry version, or undefined (vendor the running packages). */
function inputSpec(input: string): string | undefined {
  try {
    const spec = (
      JSON.parse(readFileSync(join(input, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }
    ).dependencies?.ctrlmetrics;
    return spec && !spec.startsWith('file:') ? spec : undefined;
  } catch {
    return undefined;
  }
}

export async function alphaGenerate(opts: AlphaGenerateOptions = {}): Promise<AlphaGenerateResult> {
  const input = resolve(opts.inputDir ?? '.');
  const project = readProjectFile(input);
  const output = resolve(opts.outputDir ?? `${input}-generated`);
  if (output === input || output.startsWith(`${input}/`))
    throw new ScaffoldError(`--output-dir ${output} is inside the project: choose a folder of its own`);
  if (existsSync(output) && readdirSync(output).length > 0)
    throw new ScaffoldError(`${output} is not empty: choose a new or empty folder with --output-dir`);

  const steps: string[] = [];
  const notCarried: string[] = [];
  const spec = opts.ctrlmetricsVersion ?? inputSpec(input);
  await initProject({
    projectName: project.projectName,
    domain: project.domain,
    dir: output,
    multigroup: project.multigroup === true,
    ...(spec ? { ctrlmetricsVersion: spec } : {}),
  });
  steps.push(
    `ctrlmetrics init --project-name ${project.projectName} --domain ${project.domain}${project.multigroup ? ' --multigroup' : ''}`,
  );

  const resources = project.resources ?? [];
  const replay = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
    try {
      await fn();
      steps.push(what);
    } catch (err) {
      notCarried.push(`${what}: ${(err as Error).message}`);
    }
  };
  const flagsOf = (r: ProjectResource) => `--group ${r.group} --version ${r.version} --kind ${r.kind}`;
  const kindOf = (r: ProjectResource) => ({ dir: output, group: r.group, version: r.version, kind: r.kind });
  for (const r of resources) {
    if (r.external) {
      // its types came from another project's CRDs, which the project file does not name: carried as they are
      notCarried.push(
        `create api ${flagsOf(r)} --resource=false --external-api-path <its CRDs>: an external kind, not replayed (its types and controller are carried)`,
      );
      continue;
    }
    if (!r.api && !r.controller) continue;
    await replay(
      `ctrlmetrics create api ${flagsOf(r)}${r.api ? '' : ' --resource=false'}${r.controller ? '' : ' --controller=false'}${r.api?.namespaced === false ? ' --namespaced=false' : ''}${r.plural ? ` --plural ${r.plural}` : ''}`,
      () =>
        createApi({
          ...kindOf(r),
          resource: !!r.api,
          controller: !!r.controller,
          ...(r.api?.namespaced === false ? { namespaced: false } : {}),
          ...(r.plural ? { plural: r.plural } : {}),
        }),
    );
  }
  for (const r of resources) {
    const w = r.webhooks;
    if (!w) continue;
    if (w.defaulting || w.validation)
      await replay(
        `ctrlmetrics create webhook ${flagsOf(r)}${w.defaulting ? ' --defaulting' : ''}${w.validation ? ' --programmatic-validation' : ''}`,
        () =>
          createWebhook({
            ...kindOf(r),
            defaulting: !!w.defaulting,
            programmaticValidation: !!w.validation,
          }),
      );
    if (w.conversion)
      await replay(
        `ctrlmetrics create webhook ${flagsOf(r)} --conversion${w.spoke?.length ? ` --spoke ${w.spoke.join(',')}` : ''}`,
        () =>
          createWebhook({
            ...kindOf(r),
            conversion: true,
            ...(w.spoke?.length ? { spoke: w.spoke } : {}),
          }),
      );
  }
  // the options that are on in the project's kustomizations (what PROJECT's plugins record, read where it is true)
  // (not those the replayed commands turned on already: create webhook turns certmanager on)
  const state = readOptionState(input);
  const already = readOptionState(output);
  const on = SCAFFOLD_OPTIONS.filter((o) => state[o] && !already[o]);
  if (on.length) await replay(`ctrlmetrics edit --enable ${on.join(',')}`, () => editProject(output, { enable: on }));

  // carry the user's code: the types, controllers, webhooks, their tests and the samples, and the files of src/,
  // test/ and elsewhere that no template writes (the kustomize tree aside: the templates own it)
  const templates = new Set(filesOf(output));
  const carried: string[] = [];
  const inputFiles = filesOf(input);
  for (const p of inputFiles) {
    const users = USER_CODE.some((prefix) => p.startsWith(prefix));
    if (!(users || (!templates.has(p) && !p.startsWith('config/')))) continue;
    const to = join(output, p);
    if (templates.has(p) && sameFile(join(input, p), to)) continue;
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(input, p), to);
    carried.push(p);
  }

  // the manifests of the carried types, roles and webhooks (npm run manifests, and the webhook configurations)
  const { writeCrds, writeRoles, writeWebhooks } = await import('../generate/index.js');
  try {
    await writeCrds({ paths: ['src'], outputDir: 'config/crd/bases', root: output });
    await writeRoles({ paths: ['src'], output: 'config/rbac/role.yaml', root: output });
    await writeWebhooks({ paths: ['src'], output: 'config/webhook/manifests.yaml', root: output });
  } catch (err) {
    notCarried.push(`the manifests of the carried code: ${(err as Error).message}; fix it, then run npm run manifests`);
  }

  // the Helm chart, made again from the new kustomize tree; the chart files its user edited are to merge by hand
  const regenerated: string[] = [];
  if (project.plugins?.[HELM_PLUGIN]) {
    await replay('ctrlmetrics edit --enable helm', async () => {
      await generateHelmChart(output);
      setPlugin(output, HELM_PLUGIN, true);
    });
    regenerated.push(...editedChartFiles(input).map((f) => `${CHART_DIR}/${f}`));
  }

  // what the templates (and the generators) now write differently from the project: merge by hand
  const now = new Set(filesOf(output));
  for (const p of inputFiles) {
    if (carried.includes(p)) continue;
    if (now.has(p)) {
      // the manifests are the generators' output from the carried code, not files to merge
      if (!MANIFESTS.some((m) => p.startsWith(m)) && !sameFile(join(input, p), join(output, p))) regenerated.push(p);
    } else
      notCarried.push(`${p}: not one of the templates' files in the kustomize tree; add it to the new one by hand`);
  }
  return { dir: output, steps, carried, regenerated, notCarried };
}

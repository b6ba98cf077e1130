/**
 * `ctrlmetrics generate`: controller-gen's job for TypeScript API definitions — CRDs from the kinds' types and
 * markers, the manager's role from `+kubebuilder:rbac` markers — written as YAML with sorted keys, the same bytes
 * for the same sources; and the other way, TypeScript types from another project's CRDs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { generateCrds, type CrdOptions, type GeneratedCrd } from './crd.js';
import { generateRoles } from './rbac.js';
import { generateWebhookConfigurations } from './webhooks.js';
import { ApiSources, loadTypeScript, sourceFiles } from './source.js';

export { MarkerError } from './markers.js';
export { TypesError, crdKinds, typesFromCrds, writeTypesFromCrds, type CrdKind, type GeneratedTypes } from './types.js';
export type { CrdOptions, GeneratedCrd } from './crd.js';

/** YAML as controller-gen writes it: a `---` line, keys sorted, list items at their key's indent. */
export function toManifestYaml(docs: unknown[]): string {
  return docs.map((d) => `---\n${stringify(d, { sortMapEntries: true, indentSeq: false, lineWidth: 80 })}`).join('');
}

async function load(paths: string[], root: string): Promise<ApiSources> {
  const files = sourceFiles(paths.map((p) => resolve(root, p)));
  if (files.length === 0) throw new Error(`no TypeScript sources under ${paths.join(', ')}`);
  return new ApiSources(await loadTypeScript(), files, root);
}

/** The CRDs of the kinds under `paths` (nothing written). */
export async function crdsOf(paths: string[], root = process.cwd(), opts: CrdOptions = {}): Promise<GeneratedCrd[]> {
  return generateCrds(await load(paths, root), opts);
}

/** The role documents of the `+kubebuilder:rbac` markers under `paths` (nothing written); none without markers. */
export async function rolesOf(
  paths: string[],
  root = process.cwd(),
  roleName?: string,
): Promise<Array<Record<string, unknown>>> {
  const src = await load(paths, root);
  const markers = src.sources().flatMap((sf) => src.markersOfFile(sf).filter((m) => m.name === 'kubebuilder:rbac'));
  return generateRoles(markers, roleName);
}

/** Writes a file only when its content changes; answers whether it did. */
function writeIfChanged(file: string, content: string): boolean {
  try {
    if (readFileSync(file, 'utf8') === content) return false;
  } catch {
    /* a new file */
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return true;
}

/** `generate crd`: one `<group>_<plural>.yaml` per CRD in `outputDir`. Answers the files and whether each changed. */
export async function writeCrds(
  opts: { paths: string[]; outputDir: string; root?: string } & CrdOptions,
): Promise<Array<{ file: string; changed: boolean }>> {
  const root = opts.root ?? process.cwd();
  const crds = await crdsOf(opts.paths, root, { maxDescLen: opts.maxDescLen });
  return crds.map((c) => {
    const file = join(resolve(root, opts.outputDir), c.fileName);
    return { file, changed: writeIfChanged(file, toManifestYaml([c.crd])) };
  });
}

/** `generate rbac`: the roles into `output`; nothing is written without markers. */
export async function writeRoles(opts: {
  paths: string[];
  output: string;
  root?: string;
  roleName?: string;
}): Promise<{ file: string; changed: boolean } | undefined> {
  const root = opts.root ?? process.cwd();
  const roles = await rolesOf(opts.paths, root, opts.roleName);
  if (roles.length === 0) return undefined;
  const file = resolve(root, opts.output);
  return { file, changed: writeIfChanged(file, toManifestYaml(roles)) };
}

/** The webhook configurations of the `+kubebuilder:webhook` markers under `paths` (nothing written); none without. */
export async function webhookConfigurationsOf(
  paths: string[],
  root = process.cwd(),
): Promise<Array<Record<string, unknown>>> {
  const src = await load(paths, root);
  return generateWebhookConfigurations(
    src.sources().flatMap((sf) => src.markersOfFile(sf).filter((m) => m.name === 'kubebuilder:webhook')),
  );
}

/** `generate webhook`: the configurations into `output` (config/webhook/manifests.yaml); nothing without markers. */
export async function writeWebhooks(opts: {
  paths: string[];
  output: string;
  root?: string;
}): Promise<{ file: string; changed: boolean } | undefined> {
  const root = opts.root ?? process.cwd();
  const configs = await webhookConfigurationsOf(opts.paths, root);
  if (configs.length === 0) return undefined;
  const file = resolve(root, opts.output);
  return { file, changed: writeIfChanged(file, toManifestYaml(configs)) };
}

/**
 * `ctrlmetrics create webhook`: kubebuilder's `create webhook --defaulting --programmatic-validation --conversion`
 * for a kind made by `create api` — the webhook code with its markers and its test on the authority, registration
 * in src/main.ts, `config/webhook/`, the manager's webhook patch, cert-manager's serving certificate with CA
 * injection into the configurations (and, for a conversion, into the CRD, whose conversion patch points at
 * `/convert`; the hub becomes the storage version), and the webhook half of the network policy.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { formatTypeScript, projectPrettierOptions } from './format.js';
import { dirname, join, resolve } from 'node:path';
import { ScaffoldError } from './errors.js';
import { PROJECT_FILE, readProjectFile, renderProjectFile, type ProjectResource } from './project-file.js';
import { builtinEntry, builtinEntryOf, insertAtMarker, withKubernetesTypes } from './create-api.js';
import { builtinGroupOf, resolveBuiltinKind, type BuiltinKind } from './builtin-kinds.js';
import { builtinSample } from './builtin-samples.js';
import { builtinWebhookFile, builtinWebhookTestFile } from './templates/builtin-webhook.js';
import { editProject, load, patchIs, render, resourceIs } from './edit.js';
import { enableEntry, type EntryMatcher } from './yaml-list.js';
import { pluralOf } from '../generate/crd.js';
import type { ApiResource } from './templates/api.js';
import type { ProjectParams } from './templates/params.js';
import { hasStorageVersion, importPath, typesPath, withStorageVersion } from './templates/api.js';
import {
  conversionFile,
  conversionFunction,
  conversionPath,
  conversionTestFile,
  conversionTestPath,
  crdConversionPatch,
  crdConversionPatchPath,
  crdKustomizeConfig,
  managerWebhookPatch,
  webhookCertificate,
  webhookFile,
  webhookFunction,
  webhookKustomization,
  webhookKustomizeConfig,
  webhookPath,
  webhookService,
  webhookTestFile,
  webhookTestPath,
  type WebhookKinds,
} from './templates/webhook.js';

export interface CreateWebhookOptions {
  dir?: string;
  group?: string;
  version?: string;
  kind?: string;
  defaulting?: boolean;
  programmaticValidation?: boolean;
  /** Scaffold a conversion webhook: `version` is the hub, the kind's other versions (or `spoke`) the spokes. */
  conversion?: boolean;
  /** The spoke versions (each must exist for the kind); default every other version of it. */
  spoke?: string[];
  force?: boolean;
}

export interface CreateWebhookResult {
  dir: string;
  resource: ApiResource;
  written: string[];
  /** A conversion webhook was scaffolded (the CRD's storage version may have moved to the hub). */
  conversionCreated: boolean;
}

const MAIN = 'src/main.ts';
const DEFAULT_KUSTOMIZATION = 'config/default/kustomization.yaml';
const WEBHOOK_PATCH = {
  path: 'manager_webhook_patch.yaml',
  target: { kind: 'Deployment', name: 'controller-manager' },
};

/** kustomize replacements: the Service's name and namespace into the serving certificate's DNS names. */
function dnsReplacement(fieldPath: 'metadata.name' | 'metadata.namespace'): Record<string, unknown> {
  return {
    source: { kind: 'Service', version: 'v1', name: 'webhook-service', fieldPath },
    targets: [
      {
        select: { kind: 'Certificate', group: 'cert-manager.io', version: 'v1', name: 'serving-cert' },
        fieldPaths: ['spec.dnsNames.0', 'spec.dnsNames.1'],
        options: { delimiter: '.', index: fieldPath === 'metadata.name' ? 0 : 1, create: true },
      },
    ],
  };
}

/** kustomize replacements: cert-manager's CA injection annotation (`<namespace>/<certificate>`) on a configuration. */
function caReplacement(
  fieldPath: 'metadata.name' | 'metadata.namespace',
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
): Record<string, unknown> {
  return {
    source: { kind: 'Certificate', group: 'cert-manager.io', version: 'v1', name: 'serving-cert', fieldPath },
    targets: [
      {
        select: { kind },
        fieldPaths: ['metadata.annotations.[cert-manager.io/inject-ca-from]'],
        options: { delimiter: '/', index: fieldPath === 'metadata.namespace' ? 0 : 1, create: true },
      },
    ],
  };
}

/** kustomize replacements: cert-manager's CA injection annotation on a CRD converted by the webhook. */
function crdCaReplacement(fieldPath: 'metadata.name' | 'metadata.namespace', crdName: string): Record<string, unknown> {
  return {
    source: { kind: 'Certificate', group: 'cert-manager.io', version: 'v1', name: 'serving-cert', fieldPath },
    targets: [
      {
        select: { kind: 'CustomResourceDefinition', name: crdName },
        fieldPaths: ['metadata.annotations.[cert-manager.io/inject-ca-from]'],
        options: { delimiter: '/', index: fieldPath === 'metadata.namespace' ? 0 : 1, create: true },
      },
    ],
  };
}

const crdReplacementIs =
  (fieldPath: string, crdName: string): EntryMatcher =>
  (e) => {
    const r = e as { source?: Record<string, unknown>; targets?: Array<{ select?: Record<string, unknown> }> } | null;
    return (
      !!r &&
      r.source?.name === 'serving-cert' &&
      r.source?.fieldPath === fieldPath &&
      !!r.targets?.some((t) => t?.select?.kind === 'CustomResourceDefinition' && t.select.name === crdName)
    );
  };

const replacementIs =
  (want: Record<string, unknown>): EntryMatcher =>
  (e) => {
    const r = e as { source?: Record<string, unknown>; targets?: Array<{ select?: Record<string, unknown> }> } | null;
    const w = want as { source: Record<string, unknown>; targets: Array<{ select: Record<string, unknown> }> };
    return (
      !!r &&
      r.source?.name === w.source.name &&
      r.source?.kind === w.source.kind &&
      r.source?.fieldPath === w.source.fieldPath &&
      Array.isArray(r.targets) &&
      r.targets.every((t) => t?.select?.kind === w.targets[0].select.kind)
    );
  };

export async function createWebhook(opts: CreateWebhookOptions): Promise<CreateWebhookResult> {
  const dir = resolve(opts.dir ?? '.');
  const group = (opts.group ?? '').trim();
  const version = (opts.version ?? '').trim();
  const kind = (opts.kind ?? '').trim();
  const project = readProjectFile(dir);
  if (!existsSync(join(dir, MAIN))) throw new ScaffoldError(`${MAIN} file should present in the root directory`);
  const k: WebhookKinds = { defaulting: !!opts.defaulting, validation: !!opts.programmaticValidation };
  const conversion = !!opts.conversion;
  const admission = k.defaulting || k.validation;
  if (!admission && !conversion) {
    throw new ScaffoldError(
      'create webhook requires at least one of --defaulting, --programmatic-validation and --conversion to be true',
    );
  }
  const resources = project.resources ?? [];
  const own = resources.find((r) => r.group === group && r.version === version && r.kind === kind && r.api);
  // a kind the project does not define: one of Kubernetes' own, whose webhooks the library serves as any other's
  let builtin: BuiltinKind | undefined;
  if (!own) {
    if (builtinGroupOf(group) === undefined)
      throw new ScaffoldError('create webhook requires a previously created API');
    builtin = resolveBuiltinKind(group, version, kind);
    if (conversion)
      throw new ScaffoldError(
        `${kind} is a built-in kind of Kubernetes, which the API server converts itself: a conversion webhook is for a CRD's versions`,
      );
  }
  const entry: ProjectResource = own ?? (builtin && builtinEntryOf(resources, builtin)) ?? builtinEntry(builtin!);
  const existing = entry.webhooks ?? {};
  if (!opts.force) {
    if (k.defaulting && existing.defaulting)
      throw new ScaffoldError('defaulting webhook already exists for this resource');
    if (k.validation && existing.validation)
      throw new ScaffoldError('validation webhook already exists for this resource');
    if (conversion && existing.conversion)
      throw new ScaffoldError('conversion webhook already exists for this resource');
  }
  const versionsOfKind = resources.filter((x) => x.group === group && x.kind === kind && x.api).map((x) => x.version);
  const spokes = conversion
    ? opts.spoke?.length
      ? opts.spoke.map((v) => v.trim()).filter(Boolean)
      : versionsOfKind.filter((v) => v !== version)
    : [];
  for (const v of spokes)
    if (v === version || !versionsOfKind.includes(v)) throw new ScaffoldError(`invalid spoke version "${v}"`);
  if (conversion && spokes.length === 0) {
    throw new ScaffoldError(
      `a conversion webhook needs another version of ${kind} to convert from: create it first (ctrlmetrics create api --group ${group} --version <version> --kind ${kind} --controller=false)`,
    );
  }
  // a webhook file holds every webhook kind of its resource: asking for one more keeps those it has
  const kinds: WebhookKinds = {
    defaulting: k.defaulting || !!existing.defaulting,
    validation: k.validation || !!existing.validation,
  };

  const lowerKind = kind.toLowerCase();
  const plural = builtin?.plural ?? entry.plural ?? pluralOf(lowerKind);
  const r: ApiResource = {
    group: builtin?.projectGroup ?? group,
    qualifiedGroup: builtin ? builtin.group : [group, project.domain].filter(Boolean).join('.'),
    version,
    kind,
    lowerKind,
    plural,
    irregularPlural: !builtin && plural !== pluralOf(lowerKind),
    namespaced: builtin ? builtin.namespaced : !!entry.api?.namespaced,
    ...(project.multigroup && !builtin ? { multigroup: true } : {}),
  };
  const params: ProjectParams = { projectName: project.projectName, domain: project.domain, ctrlmetricsVersion: '' };
  const read = (p: string) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined);
  const out = new Map<string, string>();
  const current = (p: string) => out.get(p) ?? read(p);
  const need = (p: string) => {
    const t = current(p);
    if (t === undefined) throw new ScaffoldError(`${p} not found: the project is missing the files init generated`);
    return t;
  };

  let main = need(MAIN);
  if (admission && builtin) {
    const sample = builtinSample(
      builtin.apiVersion,
      kind,
      `${lowerKind}-sample`,
      builtin.namespaced ? 'default' : undefined,
    );
    if (!sample)
      throw new ScaffoldError(`${kind} (${builtin.apiVersion}) has no sample object to test its webhooks with`);
    out.set(webhookPath(r), builtinWebhookFile(builtin, kinds, project.domain));
    out.set(webhookTestPath(r), builtinWebhookTestFile(builtin, kinds, sample, project.domain));
    const pkg = withKubernetesTypes(builtin, current('package.json'));
    if (pkg !== undefined) out.set('package.json', pkg);
  } else if (admission) {
    out.set(webhookPath(r), webhookFile(r, kinds));
    out.set(webhookTestPath(r), webhookTestFile(r, kinds));
  }
  if (admission) {
    main = insertAtMarker(
      main,
      '// +ctrlmetrics:scaffold:imports',
      `import { ${webhookFunction(r)} } from '${importPath(MAIN, webhookPath(r))}';`,
      MAIN,
    );
    // ENABLE_WEBHOOKS=false runs the manager without them (e.g. locally, with no certificate), as kubebuilder's main.go
    main = insertAtMarker(
      main,
      '// +ctrlmetrics:scaffold:controllers',
      `if (process.env.ENABLE_WEBHOOKS !== 'false') mgr.add(${webhookFunction(r)}());`,
      MAIN,
    );
  }
  if (conversion) {
    out.set(conversionPath(r), conversionFile(r, spokes));
    out.set(conversionTestPath(r), conversionTestFile(r, spokes));
    main = insertAtMarker(
      main,
      '// +ctrlmetrics:scaffold:imports',
      `import { ${conversionFunction(r)} } from '${importPath(MAIN, conversionPath(r))}';`,
      MAIN,
    );
    main = insertAtMarker(
      main,
      '// +ctrlmetrics:scaffold:controllers',
      `if (process.env.ENABLE_WEBHOOKS !== 'false') mgr.add(${conversionFunction(r)}());`,
      MAIN,
    );
    // the hub is the version objects are stored in
    for (const v of versionsOfKind) {
      const f = typesPath({ ...r, version: v });
      const text = current(f);
      if (text === undefined) continue;
      const marked = withStorageVersion(text, kind, v === version);
      if (marked === undefined)
        throw new ScaffoldError(
          `${f} has no "export interface ${kind}": mark the hub ${version} with // +kubebuilder:storageversion by hand`,
        );
      if (marked !== text || (v === version && !hasStorageVersion(text))) out.set(f, marked);
    }
    out.set(crdConversionPatchPath(r), crdConversionPatch(r));
    if (current('config/crd/kustomizeconfig.yaml') === undefined)
      out.set('config/crd/kustomizeconfig.yaml', crdKustomizeConfig());
    let crdK = need('config/crd/kustomization.yaml');
    const patchLine = `- path: ${crdConversionPatchPath(r).slice('config/crd/'.length)}`;
    if (!crdK.split('\n').some((l) => l.trim() === patchLine)) {
      crdK = /^patches:\s*$/m.test(crdK)
        ? crdK.replace(/^patches:\s*$/m, `patches:\n${patchLine}`)
        : `${crdK.trimEnd()}\n\npatches:\n${patchLine}\n`;
    }
    if (!/^configurations:\s*$/m.test(crdK)) crdK = `${crdK.trimEnd()}\n\nconfigurations:\n- kustomizeconfig.yaml\n`;
    out.set('config/crd/kustomization.yaml', crdK);
  }
  out.set(MAIN, main);
  // config/webhook lists manifests.yaml only once there are admission webhooks (generate writes it from their markers)
  const whK = current('config/webhook/kustomization.yaml');
  const hasAdmission = admission || !!existing.defaulting || !!existing.validation;
  if (whK === undefined)
    out.set(
      'config/webhook/kustomization.yaml',
      hasAdmission ? webhookKustomization() : webhookKustomization().replace('- manifests.yaml\n', ''),
    );
  else if (hasAdmission && !/^- manifests\.yaml\s*$/m.test(whK))
    out.set('config/webhook/kustomization.yaml', whK.replace(/^resources:\s*$/m, 'resources:\n- manifests.yaml'));
  if (current('config/webhook/kustomizeconfig.yaml') === undefined)
    out.set('config/webhook/kustomizeconfig.yaml', webhookKustomizeConfig());
  if (current('config/webhook/service.yaml') === undefined)
    out.set('config/webhook/service.yaml', webhookService(params));
  if (current('config/default/manager_webhook_patch.yaml') === undefined)
    out.set('config/default/manager_webhook_patch.yaml', managerWebhookPatch());
  if (current('config/certmanager/certificate-webhook.yaml') === undefined)
    out.set('config/certmanager/certificate-webhook.yaml', webhookCertificate(params));
  const cm = need('config/certmanager/kustomization.yaml');
  if (!/^- certificate-webhook\.yaml\s*$/m.test(cm)) {
    if (!/^- certificate-metrics\.yaml\s*$/m.test(cm))
      throw new ScaffoldError(
        'config/certmanager/kustomization.yaml: no "- certificate-metrics.yaml" entry to add the webhook certificate after; add "- certificate-webhook.yaml" under resources by hand',
      );
    out.set(
      'config/certmanager/kustomization.yaml',
      cm.replace(/^(- certificate-metrics\.yaml)(\s*)$/m, '$1\n- certificate-webhook.yaml$2'),
    );
  }
  const np = need('config/network-policy/kustomization.yaml');
  if (!/^- allow-webhook-traffic\.yaml\s*$/m.test(np)) {
    out.set(
      'config/network-policy/kustomization.yaml',
      /^#- allow-webhook-traffic\.yaml\s*$/m.test(np)
        ? np.replace(/^#- allow-webhook-traffic\.yaml/m, '- allow-webhook-traffic.yaml')
        : `${np.trimEnd()}\n- allow-webhook-traffic.yaml\n`,
    );
  }
  const conversionSpokes = conversion ? spokes : existing.spoke;
  const updated: ProjectResource = {
    ...entry,
    webhooks: {
      ...(conversion || existing.conversion ? { conversion: true } : {}),
      ...(kinds.defaulting ? { defaulting: true } : {}),
      ...(conversionSpokes?.length ? { spoke: conversionSpokes } : {}),
      ...(kinds.validation ? { validation: true } : {}),
      webhookVersion: 'v1',
    },
  };
  out.set(
    PROJECT_FILE,
    renderProjectFile({
      ...project,
      resources: resources.includes(entry)
        ? resources.map((x) => (x === entry ? updated : x))
        : [...resources, updated],
    }),
  );

  const written: string[] = [];
  const exists = (p: string) => read(p) !== undefined;
  // the webhook file is the user's code once written: rewriting it (to add a webhook kind) takes --force
  if (conversion && exists(conversionPath(r)) && !opts.force)
    throw new ScaffoldError(`failed to create ${conversionPath(r)}: file already exists (pass --force to rewrite it)`);
  if (admission && exists(webhookPath(r)) && !opts.force) {
    throw new ScaffoldError(
      `failed to create ${webhookPath(r)}: file already exists (pass --force to rewrite it with the ${kinds.defaulting && kinds.validation ? 'defaulting and validation webhooks' : 'webhook'}, replacing your code in it)`,
    );
  }
  await formatTypeScript(out, await projectPrettierOptions(dir));
  for (const [p, content] of [...out].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (read(p) === content) continue;
    if (p.startsWith('test/') && exists(p) && !opts.force) continue; // a test the user has filled in stays
    await mkdir(dirname(join(dir, p)), { recursive: true });
    await writeFile(join(dir, p), content);
    written.push(p);
  }

  // config/default: cert-manager (with its own replacements, as edit switches it), then the webhook's parts
  const cm2 = await editProject(dir, { enable: ['certmanager'] });
  if (cm2.changed.length) written.push(...cm2.changed.filter((c) => !written.includes(c)));
  const def = load(dir, DEFAULT_KUSTOMIZATION);
  const d = def.doc;
  enableEntry(d, 'resources', resourceIs('../webhook'), '../webhook');
  enableEntry(d, 'patches', patchIs(WEBHOOK_PATCH.path), WEBHOOK_PATCH);
  for (const fp of ['metadata.name', 'metadata.namespace'] as const)
    enableEntry(d, 'replacements', replacementIs(dnsReplacement(fp)), dnsReplacement(fp));
  for (const [on, configKind] of [
    [kinds.defaulting, 'MutatingWebhookConfiguration'],
    [kinds.validation, 'ValidatingWebhookConfiguration'],
  ] as const) {
    if (!on) continue;
    for (const fp of ['metadata.namespace', 'metadata.name'] as const)
      enableEntry(d, 'replacements', replacementIs(caReplacement(fp, configKind)), caReplacement(fp, configKind));
  }
  if (conversion) {
    const crdName = `${r.plural}.${r.qualifiedGroup}`;
    for (const fp of ['metadata.namespace', 'metadata.name'] as const)
      enableEntry(d, 'replacements', crdReplacementIs(fp, crdName), crdCaReplacement(fp, crdName));
  }
  const text = render(def);
  if (text !== def.original) {
    await writeFile(join(dir, DEFAULT_KUSTOMIZATION), text);
    if (!written.includes(DEFAULT_KUSTOMIZATION)) written.push(DEFAULT_KUSTOMIZATION);
  }
  return { dir, resource: r, written, conversionCreated: conversion };
}

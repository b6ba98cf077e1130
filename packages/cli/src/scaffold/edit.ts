/**
 * `ctrlmetrics edit`: switches the optional parts of a generated project on and off in its kustomizations, keeping
 * the user's own edits and comments. Idempotent. Never leaves the `SERVICE_NAME.SERVICE_NAMESPACE` placeholders of
 * the Certificate or the ServiceMonitor TLS patch in a build: their replacements are switched together with them.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseAllDocuments, parseDocument, type Document, type Node, type YAMLMap } from 'yaml';
import { disableEntry, enableEntry, hasEntry, type EntryMatcher } from './yaml-list.js';
import { metricsReplacement } from './templates/config-default.js';
import { MONITOR_TLS_PATCH } from './templates/config-prometheus.js';
import { isShardingReplacement, shardingReplacements } from './templates/config-sharding.js';
import { ScaffoldError, describeFsError } from './init.js';
import { scalarText } from 'ctrlmetrics/internal';
import { PROJECT_FILE, optionPlugin, readProjectFile, renderProjectFile } from './project-file.js';

/** The options `ctrlmetrics edit` switches. */
export const SCAFFOLD_OPTIONS = [
  'prometheus',
  'certmanager',
  'metrics-tls',
  'network-policy',
  'grafana',
  'sharding',
] as const;
/** The name of an option `ctrlmetrics edit` switches (`prometheus`, `metrics-tls`, …). */
export type ScaffoldOption = (typeof SCAFFOLD_OPTIONS)[number];

/** True when `s` names an option of {@link SCAFFOLD_OPTIONS}. */
export function isScaffoldOption(s: string): s is ScaffoldOption {
  return (SCAFFOLD_OPTIONS as readonly string[]).includes(s);
}

const DEFAULT_KUSTOMIZATION = 'config/default/kustomization.yaml';
const PROMETHEUS_KUSTOMIZATION = 'config/prometheus/kustomization.yaml';

const CERT_PATCH = {
  path: 'cert_metrics_manager_patch.yaml',
  target: { kind: 'Deployment', name: 'controller-manager' },
};

export const trimSlash = (s: string): string => s.replace(/\/+$/, '').replace(/^\.\//, '');
export const resourceIs =
  (name: string): EntryMatcher =>
  (e) =>
    typeof e === 'string' && trimSlash(e) === name;
export const patchIs =
  (path: string): EntryMatcher =>
  (e) =>
    !!e && typeof e === 'object' && trimSlash(scalarText((e as { path?: unknown }).path)) === path;
const replacementIs =
  (fieldPath: string, kind: string): EntryMatcher =>
  (e) => {
    const r = e as {
      source?: { name?: string; fieldPath?: string };
      targets?: Array<{ select?: { kind?: string } }>;
    } | null;
    return (
      !!r &&
      typeof r === 'object' &&
      r.source?.name === 'controller-manager-metrics-service' &&
      r.source?.fieldPath === fieldPath &&
      Array.isArray(r.targets) &&
      r.targets.length > 0 &&
      r.targets.every((t) => t?.select?.kind === kind)
    );
  };

const RESOURCE: Record<Exclude<ScaffoldOption, 'metrics-tls'>, string> = {
  prometheus: '../prometheus',
  certmanager: '../certmanager',
  'network-policy': '../network-policy',
  grafana: '../grafana',
  sharding: '../sharding',
};
const RESOURCE_DIR: Record<Exclude<ScaffoldOption, 'metrics-tls'>, string> = {
  prometheus: 'config/prometheus',
  certmanager: 'config/certmanager',
  'network-policy': 'config/network-policy',
  grafana: 'config/grafana',
  sharding: 'config/sharding',
};

/** The patch that makes the manager a shard, switched with `../sharding`. */
const SHARDING_PATCH = {
  path: 'manager_sharding_patch.yaml',
  target: { kind: 'Deployment', name: 'controller-manager' },
};
/** What the sharding option needs in the project besides config/sharding (made by init since it has the option). */
const SHARDING_FILES: Array<[string, string]> = [
  ['config/default/manager_sharding_patch.yaml', 'it makes the manager a shard'],
  ['src/sharder.ts', "the sharder's Deployment runs it"],
];

const FIELD_PATHS = ['metadata.name', 'metadata.namespace'] as const;

export interface LoadedFile {
  path: string;
  /** The file as read (restored as is when a write of the other file fails). */
  original: string;
  /** `original` with LF line ends: what is parsed and edited, so that no `\r` ever lands in a value. */
  text: string;
  /** The file's own line end, written back. */
  eol: '\n' | '\r\n';
  doc: Document;
}

/** What an option turns on along with it. */
const NEEDS: Partial<Record<ScaffoldOption, ScaffoldOption[]>> = {
  'metrics-tls': ['prometheus', 'certmanager'],
  sharding: ['certmanager'],
};

const REGENERATE_HINT =
  'fix it by hand, or compare with a fresh `ctrlmetrics init` in another directory; nothing was written';

export function load(dir: string, rel: string): LoadedFile {
  const path = join(dir, rel);
  if (!existsSync(path)) {
    if (rel === DEFAULT_KUSTOMIZATION) {
      throw new ScaffoldError(
        `${rel} not found in ${dir}: not a ctrlmetrics project (run ctrlmetrics init, or pass --dir)`,
      );
    }
    throw new ScaffoldError(`${rel} not found in ${dir}: ${REGENERATE_HINT}`);
  }
  const original = readFileSync(path, 'utf8');
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const text = original.replace(/\r\n/g, '\n');
  const all = parseAllDocuments(text);
  if (!Array.isArray(all) || all.length !== 1)
    throw new ScaffoldError(`${rel} must hold exactly one YAML document: ${REGENERATE_HINT}`);
  const doc = all[0];
  if (doc.errors.length > 0)
    throw new ScaffoldError(`${rel} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (!isMap(doc.contents))
    throw new ScaffoldError(`${rel} is not a kustomization (a YAML mapping): ${REGENERATE_HINT}`);
  for (const key of ['resources', 'patches', 'replacements']) {
    const v = doc.get(key, true);
    if (v !== undefined && v !== null && !isSeq(v) && !(isScalar(v) && v.value === null)) {
      throw new ScaffoldError(
        `${rel}: "${key}" is not a list, so ctrlmetrics edit cannot switch entries in it: ${REGENERATE_HINT}`,
      );
    }
  }
  return { path, original, text, eol, doc };
}

function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

/**
 * Refuses when `needle` (a file or directory the option switches) is used under another key than `key`, e.g. the
 * cert patch moved to the deprecated `patchesJson6902`: adding it to `patches` too would apply it twice.
 */
function refuseForeignReference(file: LoadedFile, rel: string, key: string, needle: string): void {
  const root = file.doc.contents as YAMLMap;
  for (const pair of root.items) {
    const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (k === key || pair.value === null || pair.value === undefined) continue;
    if (strings((pair.value as Node).toJSON?.() ?? pair.value).some((v) => trimSlash(v) === needle)) {
      throw new ScaffoldError(
        `${rel} refers to ${needle} under "${k}", where ctrlmetrics edit cannot switch it (it uses "${key}"): ${REGENERATE_HINT}`,
      );
    }
  }
}

/** Refuses when an active replacement reads the metrics Service but is not one of the four blocks edit switches. */
function refuseUnknownReplacements(file: LoadedFile, rel: string): void {
  const list = file.doc.get('replacements', true);
  if (!isSeq(list)) return;
  const known = (['Certificate', 'ServiceMonitor'] as const).flatMap((kind) =>
    FIELD_PATHS.map((fp) => replacementIs(fp, kind)),
  );
  for (const item of list.items) {
    const r = (item as Node).toJSON() as { source?: { name?: string } } | null;
    if (r?.source?.name === 'controller-manager-metrics-service' && !known.some((m) => m(r))) {
      throw new ScaffoldError(
        `${rel} has a replacement from controller-manager-metrics-service that ctrlmetrics edit does not know ` +
          `(one block per target kind: Certificate or ServiceMonitor), so switching it could fill a field twice or leave a placeholder: ${REGENERATE_HINT}`,
      );
    }
  }
}

function requireFile(root: string, rel: string, why: string): void {
  if (!existsSync(join(root, rel))) throw new ScaffoldError(`${rel} not found (${why}): ${REGENERATE_HINT}`);
}

/** Keeps the file's own sequence style: `key:\n- item` (kubebuilder) or `key:\n  - item`. */
function indentsSequences(text: string): boolean {
  return /^[A-Za-z][\w-]*:[ \t]*(#.*)?\n(?:[ \t]*#.*\n)*[ \t]+- /m.test(text);
}

export function render(file: LoadedFile): string {
  const text = file.doc.toString({ indentSeq: indentsSequences(file.text), lineWidth: 0 });
  return file.eol === '\n' ? text : text.replace(/\n/g, file.eol);
}

/** Replaces the file in one rename (readers see the old or the new text), keeping its permissions. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.ctrlmetrics-edit-${process.pid}`;
  try {
    await writeFile(tmp, text, { mode: statSync(path).mode & 0o777 });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Current state of each option, as read from the kustomizations. */
export function readOptionState(dir: string): Record<ScaffoldOption, boolean> {
  const d = load(resolve(dir), DEFAULT_KUSTOMIZATION).doc;
  return {
    prometheus: hasEntry(d, 'resources', resourceIs(RESOURCE.prometheus)),
    certmanager: hasEntry(d, 'resources', resourceIs(RESOURCE.certmanager)),
    'metrics-tls': hasEntry(d, 'patches', patchIs(CERT_PATCH.path)),
    'network-policy': hasEntry(d, 'resources', resourceIs(RESOURCE['network-policy'])),
    grafana: hasEntry(d, 'resources', resourceIs(RESOURCE.grafana)),
    sharding: hasEntry(d, 'resources', resourceIs(RESOURCE.sharding)),
  };
}

/** What `ctrlmetrics edit` is asked to switch on and off. */
export interface EditRequest {
  enable?: ScaffoldOption[];
  disable?: ScaffoldOption[];
  /**
   * Build the edited `config/default` with `kubectl kustomize` when kubectl is on PATH, and put the files back
   * (refusing the edit) when it does not build. The CLI does; default false.
   */
  validate?: boolean;
}

/** Builds `dir` with `kubectl kustomize`: undefined when it builds or kubectl is not installed, else why not. */
function kustomizeError(dir: string): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(
      'kubectl',
      ['kustomize', dir],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (!err) return done(undefined);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return done(undefined); // no kubectl: nothing to check with
        done((stderr || err.message).trim().split('\n')[0]);
      },
    );
  });
}

/** What `editProject` did. */
export interface EditResult {
  /** Human-readable lines: what was switched, what was switched along with it, what already was so. */
  messages: string[];
  /** Files rewritten (relative to the project). */
  changed: string[];
}

/** Applies the requested changes (disables first, then enables). Nothing is written if anything fails. */
export async function editProject(dir: string, req: EditRequest): Promise<EditResult> {
  const root = resolve(dir);
  const enable = [...new Set(req.enable ?? [])];
  const disable = [...new Set(req.disable ?? [])];
  const both = enable.filter((o) => disable.includes(o));
  if (both.length > 0) throw new ScaffoldError(`cannot both enable and disable ${both.join(', ')}`);
  // options turned on along with another contradict disabling them in the same request
  for (const o of enable) {
    for (const needed of NEEDS[o] ?? []) {
      if (disable.includes(needed))
        throw new ScaffoldError(`cannot enable ${o} and disable ${needed}: ${o} needs ${needed}; nothing was written`);
    }
  }

  const def = load(root, DEFAULT_KUSTOMIZATION);
  // read (and checked) before anything is written: PROJECT records the options on afterwards; a project from before
  // PROJECT existed has none
  const project = existsSync(join(root, PROJECT_FILE)) ? readProjectFile(root) : undefined;
  let prom: LoadedFile | undefined;
  const promFile = (): LoadedFile => (prom ??= load(root, PROMETHEUS_KUSTOMIZATION));

  // Refuse up front what cannot be switched safely; options switched along with others count too.
  const touched = new Set<ScaffoldOption>([...enable, ...disable]);
  if (touched.has('metrics-tls')) ['prometheus', 'certmanager'].forEach((o) => touched.add(o as ScaffoldOption));
  if (touched.has('prometheus') || touched.has('certmanager')) touched.add('metrics-tls');
  if (touched.has('certmanager')) touched.add('sharding');
  if (touched.has('sharding')) touched.add('certmanager');
  for (const o of touched) {
    if (o === 'metrics-tls') {
      refuseForeignReference(def, DEFAULT_KUSTOMIZATION, 'patches', CERT_PATCH.path);
      if (existsSync(join(root, PROMETHEUS_KUSTOMIZATION))) {
        refuseForeignReference(promFile(), PROMETHEUS_KUSTOMIZATION, 'patches', MONITOR_TLS_PATCH.path);
      }
    } else {
      refuseForeignReference(def, DEFAULT_KUSTOMIZATION, 'resources', RESOURCE[o]);
    }
  }
  if (touched.has('metrics-tls')) refuseUnknownReplacements(def, DEFAULT_KUSTOMIZATION);
  if (enable.includes('sharding')) for (const [rel, why] of SHARDING_FILES) requireFile(root, rel, why);
  if (enable.includes('metrics-tls')) {
    requireFile(root, 'config/default/cert_metrics_manager_patch.yaml', 'metrics-tls mounts the certificate with it');
    requireFile(
      root,
      'config/prometheus/monitor_tls_patch.yaml',
      'metrics-tls makes the ServiceMonitor verify the certificate with it',
    );
  }
  const messages: string[] = [];
  const d = def.doc;

  const isOn = (o: ScaffoldOption): boolean =>
    o === 'metrics-tls'
      ? hasEntry(d, 'patches', patchIs(CERT_PATCH.path))
      : hasEntry(d, 'resources', resourceIs(RESOURCE[o]));

  /** Switches the replacement blocks of one target kind; true when anything changed. */
  const setReplacements = (kind: 'Certificate' | 'ServiceMonitor', on: boolean): boolean => {
    let changed = false;
    for (const fp of FIELD_PATHS) {
      const c = on
        ? enableEntry(d, 'replacements', replacementIs(fp, kind), metricsReplacement(fp, kind))
        : disableEntry(d, 'replacements', replacementIs(fp, kind), indentsSequences(def.text));
      changed = c || changed;
    }
    return changed;
  };

  /** The manager's shard patch and the [SHARDING] replacements; true when anything changed. */
  const setSharding = (on: boolean): boolean => {
    const indent = indentsSequences(def.text);
    let changed = on
      ? enableEntry(d, 'patches', patchIs(SHARDING_PATCH.path), SHARDING_PATCH)
      : disableEntry(d, 'patches', patchIs(SHARDING_PATCH.path), indent);
    for (const r of shardingReplacements()) {
      const same: EntryMatcher = (e) =>
        isShardingReplacement(e) &&
        (e as { source: { name: string; fieldPath: string } }).source.name === r.source.name &&
        (e as { source: { name: string; fieldPath: string } }).source.fieldPath === r.source.fieldPath;
      const c = on ? enableEntry(d, 'replacements', same, r) : disableEntry(d, 'replacements', same, indent);
      changed = c || changed;
    }
    if (on) changed = nameManagerInPatches() || changed;
    return changed;
  };

  /**
   * The sharder is a Deployment too: a patch of the manager that targets every Deployment (as kubebuilder's and
   * older projects' do) would change it as well, so each gets the manager's name in its target.
   */
  const nameManagerInPatches = (): boolean => {
    const list = d.get('patches', true);
    if (!isSeq(list)) return false;
    let changed = false;
    for (const item of list.items) {
      if (!isMap(item)) continue;
      const target = item.get('target', true);
      if (isMap(target) && target.get('kind') === 'Deployment' && !target.has('name')) {
        target.set('name', 'controller-manager');
        changed = true;
      }
    }
    if (changed)
      messages.push("named the manager's Deployment in the patches' targets (the sharder is a Deployment too)");
    return changed;
  };

  /** Switches the parts that go with an option's main entry (a hand-edited file may have only some of them on). */
  const setCompanions = (o: ScaffoldOption, on: boolean): boolean => {
    if (o === 'certmanager') return setReplacements('Certificate', on);
    if (o === 'sharding') return setSharding(on);
    if (o !== 'metrics-tls') return false;
    const replaced = setReplacements('ServiceMonitor', on);
    if (!on && !existsSync(join(root, PROMETHEUS_KUSTOMIZATION))) return replaced;
    const prom = promFile();
    const patched = on
      ? enableEntry(prom.doc, 'patches', patchIs(MONITOR_TLS_PATCH.path), MONITOR_TLS_PATCH)
      : disableEntry(prom.doc, 'patches', patchIs(MONITOR_TLS_PATCH.path), indentsSequences(prom.text));
    return replaced || patched;
  };

  const turnOff = (o: ScaffoldOption, why?: string): void => {
    // the webhooks' serving certificate and CA injection come from cert-manager: without it their replacements
    // have no source and the build fails
    if (o === 'certmanager' && isOn(o) && hasEntry(d, 'resources', resourceIs('../webhook'))) {
      throw new ScaffoldError(
        'certmanager cannot be disabled while the project has webhooks (../webhook in config/default): their serving certificate and CA injection come from cert-manager',
      );
    }
    if (!isOn(o)) {
      // e.g. a hand-enabled ServiceMonitor TLS patch without the cert patch: Prometheus would expect a CA the
      // manager does not serve
      if (setCompanions(o, false)) messages.push(`${o} was partly enabled by hand; disabled the rest of it`);
      else if (!why) messages.push(`${o} is already disabled`);
      return;
    }
    if ((o === 'prometheus' || o === 'certmanager') && isOn('metrics-tls')) {
      turnOff('metrics-tls', `it needs ${o}`);
    }
    if (o === 'certmanager' && isOn('sharding'))
      turnOff('sharding', "the sharder's certificate comes from cert-manager");
    if (o === 'metrics-tls') {
      disableEntry(d, 'patches', patchIs(CERT_PATCH.path), indentsSequences(def.text));
    } else {
      disableEntry(d, 'resources', resourceIs(RESOURCE[o]));
    }
    setCompanions(o, false);
    messages.push(why ? `disabled ${o} too (${why})` : `disabled ${o}`);
  };

  const turnOn = (o: ScaffoldOption, why?: string): void => {
    if (o === 'metrics-tls') {
      if (!isOn('prometheus'))
        turnOn('prometheus', 'metrics-tls configures the ServiceMonitor, and the TLS patch alone does not enable it');
      if (!isOn('certmanager')) turnOn('certmanager', 'metrics-tls uses the cert-manager Certificate');
    } else if (o === 'sharding' && !isOn('certmanager')) {
      turnOn('certmanager', "the sharder's serving certificate comes from cert-manager");
    }
    if (o !== 'metrics-tls' && !existsSync(join(root, RESOURCE_DIR[o], 'kustomization.yaml'))) {
      throw new ScaffoldError(
        `${RESOURCE_DIR[o]}/kustomization.yaml not found: regenerate it with ctrlmetrics init --force in a copy and bring it over`,
      );
    }
    const already = isOn(o);
    if (o === 'metrics-tls') enableEntry(d, 'patches', patchIs(CERT_PATCH.path), CERT_PATCH);
    else enableEntry(d, 'resources', resourceIs(RESOURCE[o]), RESOURCE[o]);
    // e.g. the Certificate's DNS names are placeholders until its replacements fill them in
    const completed = setCompanions(o, true);
    if (already)
      messages.push(completed ? `${o} was partly enabled by hand; enabled the rest of it` : `${o} is already enabled`);
    else messages.push(why ? `enabled ${o} too (${why})` : `enabled ${o}`);
  };

  try {
    for (const o of disable) turnOff(o);
    for (const o of enable) turnOn(o);
  } catch (err) {
    if (err instanceof ScaffoldError) throw err;
    throw new ScaffoldError(
      `cannot edit ${DEFAULT_KUSTOMIZATION} or ${PROMETHEUS_KUSTOMIZATION}: ${(err as Error).message}; ${REGENERATE_HINT}`,
      { cause: err },
    );
  }

  const changed: string[] = [];
  const outputs: Array<[LoadedFile, string, string]> = [];
  for (const [file, rel] of [
    [def, DEFAULT_KUSTOMIZATION],
    [prom, PROMETHEUS_KUSTOMIZATION],
  ] as Array<[LoadedFile | undefined, string]>) {
    if (!file) continue;
    const text = render(file);
    if (parseDocument(text.replace(/\r\n/g, '\n')).errors.length > 0)
      throw new ScaffoldError(`internal error: editing ${rel} produced invalid YAML; nothing written`);
    if (text !== file.original) outputs.push([file, rel, text]);
  }
  const written: LoadedFile[] = [];
  for (const [file, rel, text] of outputs) {
    try {
      await writeAtomically(file.path, text);
    } catch (err) {
      // the two kustomizations change together or not at all
      for (const w of written) await writeAtomically(w.path, w.original).catch(() => undefined);
      throw new ScaffoldError(`cannot write ${rel}: ${describeFsError(err)}; nothing was changed`);
    }
    written.push(file);
    changed.push(rel);
  }
  if (req.validate && written.length > 0) {
    const why = await kustomizeError(join(root, 'config', 'default'));
    if (why !== undefined) {
      for (const w of written) await writeAtomically(w.path, w.original).catch(() => undefined);
      throw new ScaffoldError(
        `the edited config/default does not build with kubectl kustomize (${why}); nothing was changed`,
      );
    }
  }
  // PROJECT records the options that are on now, as kubebuilder records its plugins
  if (project) {
    const plugins = Object.fromEntries(
      Object.entries(project.plugins ?? {}).filter(([k]) => !SCAFFOLD_OPTIONS.some((o) => k === optionPlugin(o))),
    );
    for (const o of SCAFFOLD_OPTIONS) if (isOn(o)) plugins[optionPlugin(o)] = {};
    const text = renderProjectFile({ ...project, plugins });
    if (text !== readFileSync(join(root, PROJECT_FILE), 'utf8')) {
      try {
        await writeAtomically(join(root, PROJECT_FILE), text);
      } catch (err) {
        for (const w of written) await writeAtomically(w.path, w.original).catch(() => undefined);
        throw new ScaffoldError(`cannot write ${PROJECT_FILE}: ${describeFsError(err)}; nothing was changed`);
      }
      changed.push(PROJECT_FILE);
    }
  }
  return { messages, changed };
}

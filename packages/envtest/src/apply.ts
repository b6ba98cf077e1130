/**
 * `--apply`: loads YAML/JSON manifests from files and directories (a directory with a kustomization file is built with
 * `kubectl kustomize`) and creates or updates the objects, namespaces and CRDs first.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ResourceRegistry } from './resources.js';
import type { KubeObject } from './types.js';
import type { ObjectService } from './objects.js';
import { crdSetForGroup } from './crds.js';
import { isRecord, list } from './json.js';

const KUSTOMIZATION = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

function parseDocs(text: string, source: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`${source}: ${doc.errors[0].message}`);
    const v = doc.toJS() as KubeObject | null;
    if (!v) continue;
    if (v.kind === 'List' && Array.isArray(v.items)) {
      for (const item of list(v.items)) {
        if (!isRecord(item)) throw new Error(`${source}: an item of a List is not an object`);
        out.push(item);
      }
    } else out.push(v);
  }
  return out;
}

/** Reads every object from the given files and directories. */
export function loadManifests(paths: string[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw new Error(`--apply ${p}: no such file or directory`);
    if (statSync(p).isDirectory()) {
      if (KUSTOMIZATION.some((k) => existsSync(join(p, k)))) {
        let text: string;
        try {
          text = execFileSync('kubectl', ['kustomize', p], {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 60_000,
          });
        } catch (err) {
          const e = err as { stderr?: string; message: string };
          throw new Error(`--apply ${p}: kubectl kustomize failed: ${(e.stderr || e.message).trim()}`, { cause: err });
        }
        out.push(...parseDocs(text, p));
      } else {
        const files = readdirSync(p)
          .filter((f) => /\.(ya?ml|json)$/.test(f))
          .sort();
        out.push(...loadManifests(files.map((f) => join(p, f))));
      }
    } else out.push(...parseDocs(readFileSync(p, 'utf8'), p));
  }
  return out;
}

function rank(o: KubeObject): number {
  if (o.kind === 'Namespace') return 0;
  if (o.kind === 'CustomResourceDefinition') return 1;
  return 2;
}

/** Creates or updates objects; returns how many were applied. Throws on the first failure with the object named. */
export function applyObjects(objects: KubeObject[], registry: ResourceRegistry, svc: ObjectService): number {
  const sorted = [...objects].sort((a, b) => rank(a) - rank(b));
  for (const o of sorted) {
    const id = `${String(o.kind)} ${o.metadata?.namespace ? `${String(o.metadata.namespace)}/` : ''}${String(o.metadata?.name)}`;
    const t = registry.forKind(String(o.apiVersion ?? ''), String(o.kind ?? ''));
    if (!t || t.virtual) {
      const set = crdSetForGroup(String(o.apiVersion ?? '').split('/')[0]);
      const hint = set
        ? `: start it with --crds ${set} (the ${set} CRDs ship with ctrlmetrics), or apply the CRD first`
        : '';
      throw new Error(
        `cannot apply ${id}: the authority does not serve ${String(o.apiVersion)} ${String(o.kind)}${hint}`,
      );
    }
    try {
      svc.createOrUpdate(t, o);
    } catch (err) {
      throw new Error(`cannot apply ${id}: ${(err as Error).message}`, { cause: err });
    }
  }
  return sorted.length;
}

/** The deletes: one object (with its DeleteOptions and preconditions) and a collection, each through admission. */
import { admittedDelete } from '../admitted-writes.js';
import { apiVersionOf } from '../resources.js';
import { sendWritten, warn } from '../responses.js';
import type { KubeObject } from '../types.js';
import { deleteOptionsError } from '../write-options.js';
import type { ResourceRequest } from './context.js';

/** A delete with its DeleteOptions and preconditions, admitted; answered with the object as stored. */
export async function remove(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, info, q, dryRun, body, converter, inVersion, admission, keepingWarnings } = r;
  const b = (await body()) as KubeObject | undefined;
  const opts = b && typeof b === 'object' ? b : {};
  const fromQuery = (k: string) => q.get(k) ?? undefined;
  const bad = deleteOptionsError({
    propagationPolicy: opts.propagationPolicy ?? fromQuery('propagationPolicy'),
    orphanDependents: opts.orphanDependents ?? fromQuery('orphanDependents'),
    dryRun: Array.isArray(opts.dryRun) ? opts.dryRun : q.getAll('dryRun'),
  });
  if (bad) throw bad;
  const pre = opts.preconditions as { uid?: string; resourceVersion?: string } | undefined;
  const isDryRun = dryRun || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All'));
  const remove = () => d.objects.delete(t, ns, info.name, { dryRun: isDryRun, preconditions: pre });
  const warnings: string[] = [];
  const a = admission(info.name, warnings, isDryRun);
  // the answer is the stored object: in the version it was stored in, converted to the request's
  const storedVersion = converter ? d.objects.peek(t, ns, info.name)?.apiVersion : undefined;
  let out = a
    ? await keepingWarnings(warnings, () =>
        admittedDelete({ ...a, deleteOptions: { ...opts, ...(isDryRun ? { dryRun: ['All'] } : {}) } }, remove),
      )
    : remove();
  if (storedVersion) out = await inVersion({ ...out, apiVersion: storedVersion });
  warn(res, warnings);
  return sendWritten(d, res, 200, out);
}

/** A collection's delete by selectors; with webhooks, each object's delete is admitted. */
export async function removeCollection(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, q, dryRun, body, webhooks, converter, admission } = r;
  const sel = { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') };
  // DeleteOptions come in the body as for one object's delete (kube decodes them there), or the query
  const b = (await body()) as KubeObject | undefined;
  const opts = b && typeof b === 'object' ? b : {};
  const bad = deleteOptionsError({
    propagationPolicy: opts.propagationPolicy ?? q.get('propagationPolicy') ?? undefined,
    orphanDependents: opts.orphanDependents ?? q.get('orphanDependents') ?? undefined,
    dryRun: Array.isArray(opts.dryRun) ? opts.dryRun : q.getAll('dryRun'),
  });
  if (bad) throw bad;
  const isDryRun = dryRun || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All'));
  // the answer lists the objects as they were before the delete, converted to the request's version
  const stored = converter
    ? d.objects.listPage(t, ns, sel, { limit: null, continue: null, resourceVersion: null }).items
    : [];
  const answerItems = async (items: KubeObject[]) =>
    converter ? (await converter.convert(t, stored, t.version)).map((o) => d.objects.present(t, o)) : items;
  if (!webhooks) {
    const out = d.objects.deleteCollection(t, ns, sel, { dryRun: isDryRun });
    return sendWritten(d, res, 200, { ...out, items: await answerItems(out.items as KubeObject[]) });
  }
  // each object's delete goes through admission, as kube's collection delete admits each one
  const warnings: string[] = [];
  const { items } = d.objects.list(t, ns, sel);
  for (const o of items) {
    const each = {
      ...admission(String(o.metadata?.name), warnings)!,
      namespace: t.namespaced ? String(o.metadata?.namespace) : undefined,
    };
    await admittedDelete({ ...each, deleteOptions: isDryRun ? { dryRun: ['All'] } : {} }, () =>
      d.objects.delete(t, each.namespace, each.name, { dryRun: isDryRun }),
    );
  }
  warn(res, warnings);
  return sendWritten(d, res, 200, {
    kind: t.listKind,
    apiVersion: apiVersionOf(t),
    metadata: { resourceVersion: d.objects.list(t, ns, {}).resourceVersion },
    items: await answerItems(items),
  });
}

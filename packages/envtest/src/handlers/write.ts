/**
 * The writes: create, update (whole or the status subresource) and patch (merge, strategic, JSON, apply), each
 * checked for unknown fields and types, through admission and conversion, answered once durable.
 */
import { admittedWrite } from '../admitted-writes.js';
import { checkFields, checkTypes } from '../fields.js';
import { checkWriteOptions, sendWritten, warn } from '../responses.js';
import { methodNotAllowed } from '../status.js';
import type { KubeObject } from '../types.js';
import type { ResourceRequest } from './context.js';

/** A create: fields and types checked (fieldValidation), admission, conversion, 201 once durable. */
export async function create(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, info, q, dryRun, manager, body, admit, admission, converting, keepingWarnings, writeQuery } =
    r;
  if (info.name) throw methodNotAllowed();
  checkWriteOptions('CreateOptions', q, false);
  const b = await body();
  const warnings = checkFields(t, b, q.get('fieldValidation'));
  checkTypes(t, b);
  const w = { dryRun, admit, manager, fieldValidation: q.get('fieldValidation'), warnings };
  const a = admission('', warnings);
  const create = converting('', (extra) => d.objects.create(t, ns, b as KubeObject, { ...w, ...extra }));
  const out = a
    ? await keepingWarnings(warnings, () => admittedWrite({ ...a, operation: 'CREATE', ...writeQuery }, create))
    : await create();
  warn(res, warnings);
  return sendWritten(d, res, 201, out);
}

/** An update of the object or its status subresource, as a create is checked and admitted. */
export async function update(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, info, q, dryRun, manager, body, admit, admission, converting, keepingWarnings, writeQuery } =
    r;
  checkWriteOptions('UpdateOptions', q, false);
  const b = await body();
  const warnings = checkFields(t, b, q.get('fieldValidation'));
  checkTypes(t, b);
  const w = {
    dryRun,
    admit,
    subresource: info.subresource,
    manager,
    fieldValidation: q.get('fieldValidation'),
    warnings,
  };
  const a = admission(info.name, warnings);
  const update = converting(info.name, (extra) =>
    d.objects.update(t, ns, info.name, b as KubeObject, { ...w, ...extra }),
  );
  const out = a
    ? await keepingWarnings(warnings, () => admittedWrite({ ...a, operation: 'UPDATE', ...writeQuery }, update))
    : await update();
  warn(res, warnings);
  return sendWritten(d, res, 200, out);
}

/** A patch (merge, strategic, JSON, apply), creating the object when an apply finds none (201). */
export async function patch(r: ResourceRequest): Promise<void> {
  const {
    d,
    req,
    res,
    t,
    ns,
    info,
    q,
    dryRun,
    manager,
    body,
    admit,
    admission,
    converting,
    keepingWarnings,
    writeQuery,
  } = r;
  const ct = String(req.headers['content-type'] ?? '');
  checkWriteOptions('PatchOptions', q, ct.split(';')[0].trim() === 'application/apply-patch+yaml');
  const existed = !!d.objects.peek(t, ns, info.name);
  const b = await body();
  // an apply configuration is checked as a body; other patches in their result (objects.ts), as kube does
  const isApply = ct.split(';')[0].trim() === 'application/apply-patch+yaml';
  const warnings = isApply ? checkFields(t, b, q.get('fieldValidation')) : [];
  const w = {
    dryRun,
    admit,
    subresource: info.subresource,
    fieldManager: q.get('fieldManager') ?? undefined,
    manager,
    force: q.get('force') === 'true',
    fieldValidation: q.get('fieldValidation'),
    warnings,
  };
  const a = admission(info.name, warnings);
  const patch = converting(info.name, (extra) => d.objects.patch(t, ns, info.name, ct, b, { ...w, ...extra }));
  const out = a
    ? await keepingWarnings(warnings, () =>
        admittedWrite({ ...a, operation: existed ? 'UPDATE' : 'CREATE', ...writeQuery }, patch),
      )
    : await patch();
  warn(res, warnings);
  return sendWritten(d, res, existed ? 200 : 201, out);
}

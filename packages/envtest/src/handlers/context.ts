/**
 * One resource request, read once before its verb's handler runs: the resource type, namespace and name, the user,
 * the query's write options, how the answer is wanted (a Table, PartialObjectMetadata), and the steps its writes
 * share — RBAC's escalation check, admission webhooks, conversion through a CRD's storage version, warnings kept on
 * a refusal. Built in dependency order, so no step uses one declared after it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdmittedWriteRequest } from '../admitted-writes.js';
import { convertedWrite } from '../converted-writes.js';
import type { CustomResourceConverter } from '../cr-conversion.js';
import type { WriteOptions } from '../objects.js';
import { checkPartialForm, partialMetadataWanted, type PartialKind } from '../partial-metadata.js';
import { admitRbacWrite, isRbacResource } from '../rbac-admission.js';
import type { UserInfo } from '../rbac.js';
import type { RequestInfo } from '../requestinfo.js';
import { warn } from '../responses.js';
import type { ServerDeps } from '../server-deps.js';
import { wantsTable } from '../table.js';
import type { KubeObject, ResourceType } from '../types.js';
import type { WebhookAdmission } from '../webhook-admission.js';

/** What every verb's handler is given. */
export interface ResourceRequest {
  d: ServerDeps;
  req: IncomingMessage;
  res: ServerResponse;
  t: ResourceType;
  /** The namespace of a namespaced resource's request; undefined for a cluster-scoped one. */
  ns: string | undefined;
  info: RequestInfo;
  user: UserInfo;
  q: URLSearchParams;
  head: boolean;
  /** `?dryRun=All`. */
  dryRun: boolean;
  /** The field manager a write is recorded under. */
  manager: string;
  /** The request's decoded body (read on the first call). */
  body: () => Promise<unknown>;
  /** The answer is a `meta.k8s.io` Table. */
  table: boolean;
  /** A read answered as PartialObjectMetadata (metadata-only clients). */
  partial: PartialKind | undefined;
  /** RBAC writes: checked against the requesting user's own rights (privilege-escalation prevention). */
  admit: ((next: KubeObject, old: KubeObject | undefined) => void) | undefined;
  webhooks: WebhookAdmission | undefined;
  /** A CRD that converts by webhook: reads convert what is stored, writes go through the storage version. */
  converter: CustomResourceConverter | undefined;
  writeQuery: { fieldManager: string | null; fieldValidation: string | null };
  /** A stored object as the request's version shows it. */
  inVersion: (stored: KubeObject) => Promise<KubeObject>;
  /** The admission of a write of `name` (undefined when no webhook applies to the resource). */
  admission: (name: string, warnings: string[], isDryRun?: boolean) => AdmittedWriteRequest | undefined;
  /** A write, through the storage version when the CRD converts by webhook. */
  converting: (
    name: string,
    write: (extra: WriteOptions) => KubeObject,
    isDryRun?: boolean,
  ) => (extra?: WriteOptions) => KubeObject | Promise<KubeObject>;
  /** Runs a write; its warnings reach the client also when admission refuses it (kube sends them as recorded). */
  keepingWarnings: <T>(warnings: string[], write: () => Promise<T>) => Promise<T>;
}

/** The request's context, from what the request handler settled (type, namespace, user, options). */
export function resourceRequest(
  base: Pick<
    ResourceRequest,
    'd' | 'req' | 'res' | 't' | 'ns' | 'info' | 'user' | 'q' | 'head' | 'dryRun' | 'manager' | 'body'
  >,
): ResourceRequest {
  const { d, req, res, t, ns, info, user, q, dryRun } = base;
  const converter = d.conversions?.webhookCrd(t) ? d.conversions : undefined;
  const inVersion = async (stored: KubeObject): Promise<KubeObject> =>
    d.objects.present(t, converter ? (await converter.convert(t, [stored], t.version))[0] : stored);
  const webhooks = d.webhooks?.applies(t) ? d.webhooks : undefined;
  const table = wantsTable(req.headers.accept);
  // PartialObjectMetadata for reads; writes answer objects whatever they ask
  const partial =
    ['get', 'list', 'watch'].includes(info.verb) && !table ? partialMetadataWanted(req.headers.accept) : undefined;
  if (partial) checkPartialForm(t, partial, info.verb === 'list');
  return {
    ...base,
    table,
    partial,
    admit: isRbacResource(t.group, t.resource)
      ? (next, old) => admitRbacWrite(d.authz, user, t.resource, next, old)
      : undefined,
    webhooks,
    converter,
    writeQuery: { fieldManager: q.get('fieldManager'), fieldValidation: q.get('fieldValidation') },
    inVersion,
    admission: (name, warnings, isDryRun = dryRun) =>
      webhooks && {
        webhooks,
        objects: d.objects,
        type: t,
        namespace: ns,
        name,
        subresource: info.subresource ?? '',
        user,
        dryRun: isDryRun,
        warnings,
        ...(converter ? { viewOfStored: inVersion } : {}),
      },
    converting:
      (name, write, isDryRun = dryRun) =>
      (extra = {}) =>
        converter
          ? convertedWrite(
              { converter, objects: d.objects, type: t, namespace: ns, name, dryRun: isDryRun },
              write,
              extra,
            )
          : write(extra),
    keepingWarnings: async (warnings, write) => {
      try {
        return await write();
      } catch (err) {
        warn(res, warnings);
        throw err;
      }
    },
  };
}

/** The reads: get (an object, a Table, PartialObjectMetadata), list (paged, in slices) and watch. */
import { partialOf } from '../partial-metadata.js';
import { apiVersionOf } from '../resources.js';
import { bool, send, sendList } from '../responses.js';
import { badRequest } from '../status.js';
import { toTable } from '../table.js';
import type { KubeObject } from '../types.js';
import type { ResourceRequest } from './context.js';

/** One object: as stored, converted to the request's version, as a Table or as PartialObjectMetadata. */
export async function get(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, info, q, head, table, partial, converter, inVersion } = r;
  const stored = converter && d.objects.peek(t, ns, info.name);
  const o = stored ? await inVersion(stored) : d.objects.get(t, ns, info.name);
  if (partial) return send(res, 200, partialOf(o), head);
  return send(
    res,
    200,
    table
      ? toTable(t, [o], { includeObject: q.get('includeObject'), resourceVersion: o.metadata?.resourceVersion })
      : o,
    head,
  );
}

/** A page of a collection, by label and field selectors, written a slice at a time (or as a Table). */
export async function list(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, q, head, table, partial, converter } = r;
  const page = d.objects.listPage(
    t,
    ns,
    { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
    { limit: q.get('limit'), continue: q.get('continue'), resourceVersion: q.get('resourceVersion') },
  );
  const { resourceVersion, ...more } = page;
  delete (more as { items?: unknown }).items;
  const items = converter ? await converter.convert(t, page.items, t.version) : page.items;
  if (table) {
    const tbl = toTable(
      t,
      items.map((o) => d.objects.present(t, o)),
      { includeObject: q.get('includeObject'), resourceVersion },
    );
    tbl.metadata = { ...(tbl.metadata as object), ...more };
    return send(res, 200, tbl, head);
  }
  if (partial)
    return sendList(
      res,
      { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion, ...more } },
      items,
      (o) => partialOf(d.objects.presentShallow(t, o)),
      head,
    );
  return sendList(
    res,
    { kind: t.listKind, apiVersion: apiVersionOf(t), metadata: { resourceVersion, ...more } },
    items,
    (o) => d.objects.presentListItem(t, o),
    head,
  );
}

/** A watch: from a resourceVersion or the current state, with bookmarks and a timeout. */
export async function watch(r: ResourceRequest): Promise<void> {
  const { d, res, t, ns, q, table, partial, converter } = r;
  const timeout = q.get('timeoutSeconds');
  const rv = q.get('resourceVersion');
  if (rv && !/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  if (timeout && !/^\d+$/.test(timeout)) throw badRequest(`invalid timeoutSeconds: ${JSON.stringify(timeout)}`);
  d.hub.serve(
    {
      type: t,
      namespace: ns,
      labelSelector: q.get('labelSelector'),
      fieldSelector: q.get('fieldSelector'),
      resourceVersion: q.get('resourceVersion'),
      allowWatchBookmarks: bool(q.get('allowWatchBookmarks')),
      sendInitialEvents: bool(q.get('sendInitialEvents')),
      timeoutSeconds: timeout ? Number(timeout) : undefined,
      table,
      partialMetadata: !!partial,
      includeObject: q.get('includeObject'),
      bookmarkIntervalMs: d.bookmarkIntervalMs,
      ...(converter ? { convert: async (o: KubeObject) => (await converter.convert(t, [o], t.version))[0] } : {}),
    },
    res,
  );
  return;
}

/**
 * `/openapi/v3` (root and one document per group version) and `/openapi/v2`.
 *
 * The built-in group versions' documents are the real kube-apiserver's (builtin-openapi.ts), schemas and all:
 * `kubectl explain` reads them. Those of custom resources are made here. kubectl's default `--validate=strict`
 * asks the OpenAPI v3 document of the object's group version whether the PATCH operation of its kind takes the
 * `fieldValidation` query parameter; when it does, kubectl leaves validation to the server instead of downloading
 * schemas. A custom resource's document therefore lists every path with its operations, the
 * `x-kubernetes-group-version-kind` extension and the query parameters, without schemas.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceRegistry } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';
import { KUBE_VERSION } from './discovery.js';
import { builtinOpenAPIv2Text, builtinOpenAPIv3 } from './builtin-openapi.js';

const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** An OpenAPI v2 `Document` message holding only `swagger: "2.0"` (field 1, a length-delimited string). */
const OPENAPI_V2_DOCUMENT = Buffer.from([0x0a, 0x03, ...Buffer.from('2.0')]);

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

const q = (name: string): KubeObject => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'pretty'].map(q);
const ok = (code: string) => ({
  [code]: { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
});

function operations(t: ResourceType): Record<string, KubeObject> {
  const gvk = { group: t.group, version: t.version, kind: t.kind };
  const base = `/${gvPath(t.group, t.version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.resource}`;
  const nsParam = t.namespaced ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string' } }] : [];
  const nameParam = [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }];
  const op = (action: string, params: KubeObject[], code = '200') => ({
    operationId: `${action}${t.kind}`,
    parameters: params,
    responses: ok(code),
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  if (t.virtual) {
    // Reviews are create-only. The PATCH entry exists only so kubectl's field-validation probe finds the kind and leaves
    // validation to the server (the authority answers PATCH on it with 405).
    return {
      [base]: { post: op('post', WRITE_PARAMS, '201'), parameters: nsParam },
      [`${base}/{name}`]: { patch: op('patch', WRITE_PARAMS), parameters: [...nameParam, ...nsParam] },
    };
  }
  return {
    [base]: {
      get: op(
        'list',
        ['labelSelector', 'fieldSelector', 'resourceVersion', 'timeoutSeconds', 'watch', 'allowWatchBookmarks'].map(q),
      ),
      post: op('post', WRITE_PARAMS, '201'),
      delete: op('deletecollection', ['labelSelector', 'fieldSelector', 'dryRun'].map(q)),
      parameters: nsParam,
    },
    [`${base}/{name}`]: {
      get: op('get', []),
      put: op('put', WRITE_PARAMS),
      patch: op('patch', [...WRITE_PARAMS, q('force')]),
      delete: op('delete', [q('dryRun')]),
      parameters: [...nameParam, ...nsParam],
    },
  };
}

function gvDocument(registry: ResourceRegistry, group: string, version: string): KubeObject | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (!types.length) return undefined;
  const paths: Record<string, KubeObject> = {};
  for (const t of types) Object.assign(paths, operations(t));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: KUBE_VERSION.gitVersion },
    paths,
    components: { schemas: {} },
  };
}

function send(res: ServerResponse, body: unknown, head: boolean): void {
  sendText(res, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), head);
}

function sendText(res: ServerResponse, text: string | Buffer, head: boolean): void {
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(head ? undefined : text);
}

/**
 * Whether a built-in document's path (`api/v1`, `apis/apps`, `apis/apps/v1`, `version`, …) is of what the
 * authority serves: a group or group version it does not serve is left out.
 */
function servedBuiltinPath(registry: ResourceRegistry, path: string): boolean {
  const parts = path.split('/');
  if (parts[0] !== 'apis' || parts.length < 2) return true;
  const versions = registry.groups().get(parts[1]);
  if (!versions) return false;
  return parts.length === 2 || versions.includes(parts[2]);
}

/** Whether a group version is a built-in one (its document is the real server's). */
function isBuiltinGroupVersion(registry: ResourceRegistry, group: string, version: string): boolean {
  return registry.all().some((t) => t.group === group && t.version === version && !t.crd);
}

/** The non-resource hook serving `/openapi/v2` and `/openapi/v3[/...]`; returns false for other paths. */
export function openapiHandler(
  registry: ResourceRegistry,
): (path: string, req: IncomingMessage, res: ServerResponse) => boolean {
  // the JSON text of each built-in document, made once (the largest, api/v1, is 1.2 MB)
  const texts = new Map<string, string>();
  return (path, req, res) => {
    if (path !== '/openapi/v2' && path !== '/openapi/v3' && !path.startsWith('/openapi/v3/')) return false;
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) return false;
    if (path === '/openapi/v2') {
      // kubectl asks for the protobuf form (and validates Lists with it); a document without definitions makes it
      // skip schema checks, leaving validation to the server as with OpenAPI v3.
      if (/protobuf/.test(String(req.headers.accept ?? ''))) {
        res.writeHead(200, {
          'Content-Type': OPENAPI_V2_PROTOBUF,
          'Content-Length': OPENAPI_V2_DOCUMENT.length,
          'Cache-Control': 'no-cache, private',
        });
        res.end(head ? undefined : OPENAPI_V2_DOCUMENT);
        return true;
      }
      sendText(res, builtinOpenAPIv2Text(), head);
      return true;
    }
    const builtin = builtinOpenAPIv3();
    if (path === '/openapi/v3') {
      const paths: Record<string, { serverRelativeURL: string }> = {};
      for (const [p, entry] of Object.entries(builtin.index.paths))
        if (servedBuiltinPath(registry, p)) paths[p] = entry;
      for (const [group, versions] of registry.groups()) {
        for (const v of versions) {
          if (isBuiltinGroupVersion(registry, group, v)) continue;
          const doc = gvDocument(registry, group, v)!;
          const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();
          paths[gvPath(group, v)] = { serverRelativeURL: `/openapi/v3/${gvPath(group, v)}?hash=${hash}` };
        }
      }
      send(
        res,
        { paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) },
        head,
      );
      return true;
    }
    const docPath = path.slice('/openapi/v3/'.length);
    const recorded = builtin.documents[docPath];
    if (recorded && servedBuiltinPath(registry, docPath)) {
      let text = texts.get(docPath);
      if (text === undefined) texts.set(docPath, (text = JSON.stringify(recorded)));
      sendText(res, text, head);
      return true;
    }
    const rest = docPath.split('/');
    let doc: KubeObject | undefined;
    if (rest[0] === 'apis' && rest.length === 3 && !isBuiltinGroupVersion(registry, rest[1], rest[2]))
      doc = gvDocument(registry, rest[1], rest[2]);
    if (!doc) return false;
    send(res, doc, head);
    return true;
  };
}

/**
 * `kustomize edit set image NAME=IMAGE` without kustomize: kubebuilder's `make deploy IMG=…` runs it on
 * `config/manager` before building, so the manifests name the image that was built. A project made by `init` has
 * no kustomize binary (kubectl's built-in kustomize builds but cannot edit), so the CLI does the edit: the
 * `images` entry of that name in `kustomization.yaml` is replaced by the new name and its tag or digest, as the
 * `images` field defines them; every other key and comment of the file is kept.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { YAMLMap, YAMLSeq, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { ScaffoldError } from './errors.js';

/** An image reference split as a kustomization's `images` entry holds it. */
export interface ImageRef {
  newName: string;
  newTag?: string;
  digest?: string;
}

// A reference as docker and kubelet take it: [registry[:port]/]path[:tag][@algorithm:hex]
const NAME_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const REGISTRY =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** Splits `example.com:5000/team/op:v1` (or `…@sha256:…`) into name, tag and digest; undefined when it is none. */
export function parseImageRef(ref: string): ImageRef | undefined {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return undefined;
  }
  let newTag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    newTag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(newTag)) return undefined;
  }
  const parts = rest.split('/');
  // the first part is a registry when it looks like a host (a dot, a port or localhost), as docker decides
  const first = parts[0];
  const hasRegistry = parts.length > 1 && (/[.:]/.test(first) || first === 'localhost' || first.startsWith('['));
  if (hasRegistry && !REGISTRY.test(first)) return undefined;
  const path = hasRegistry ? parts.slice(1) : parts;
  if (path.length === 0 || !path.every((c) => NAME_COMPONENT.test(c)) || rest.length > 255) return undefined;
  return { newName: rest, ...(newTag !== undefined ? { newTag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** What the edit wrote. */
export interface SetImageResult {
  /** the kustomization file edited */
  file: string;
  /** the image name the entry matches (`controller`) */
  name: string;
  image: ImageRef;
}

/** The kustomization file of a directory, as kustomize looks for it. */
function kustomizationFile(dir: string): string {
  for (const n of ['kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    if (existsSync(join(dir, n))) return join(dir, n);
  }
  throw new ScaffoldError(
    `no kustomization.yaml in ${dir}: run this in the project's directory (config/manager is where init put it), or pass --kustomization <dir>`,
  );
}

/**
 * Sets the image `name` to `ref` in the kustomization of `dir` (`kustomize edit set image name=ref`): the entry of
 * that name gets `newName` and `newTag` or `digest`, added when there was none.
 */
export function setImage(dir: string, name: string, ref: string): SetImageResult {
  if (!name || /[\s=]/.test(name))
    throw new ScaffoldError(
      `"${name}" is no image name to replace: give NAME=IMAGE, e.g. controller=example.com/op:v1`,
    );
  const image = parseImageRef(ref);
  if (!image) {
    throw new ScaffoldError(
      `"${ref}" is not an image reference: give [registry/]name[:tag][@sha256:digest], e.g. example.com/op:v0.1.0`,
    );
  }
  const file = kustomizationFile(dir);
  const doc = parseDocument(readFileSync(file, 'utf8'));
  if (doc.errors.length > 0) throw new ScaffoldError(`${file} is not valid YAML: ${doc.errors[0].message}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ScaffoldError(`${file} is not a kustomization (a map)`);
  let images = doc.get('images', true);
  if (images === undefined || images === null || (isScalar(images) && images.value === null)) {
    images = new YAMLSeq();
    doc.set('images', images);
  }
  if (!isSeq(images)) throw new ScaffoldError(`${file}: images is not a list`);
  const entry = new YAMLMap();
  entry.set('name', name);
  entry.set('newName', image.newName);
  if (image.newTag !== undefined) entry.set('newTag', image.newTag);
  if (image.digest !== undefined) entry.set('digest', image.digest);
  const at = images.items.findIndex((i) => isMap(i) && i.get('name') === name);
  if (at >= 0) images.items[at] = entry;
  else images.items.push(entry);
  writeFileSync(file, doc.toString({ indentSeq: false }));
  return { file, name, image };
}

/**
 * The handler of each verb of a resource request (kube-apiserver's handler chain per verb), and of the review
 * resources and the `token` and `scale` subresources.
 */
import type { ResourceRequest } from './context.js';
import { get, list, watch } from './read.js';
import { removeCollection, remove } from './remove.js';
import { create, patch, update } from './write.js';

export { resourceRequest, type ResourceRequest } from './context.js';
export { review, serviceAccountToken } from './reviews.js';
export { scale } from './scale.js';

export const VERB_HANDLERS: Readonly<Record<string, (r: ResourceRequest) => Promise<void>>> = {
  get,
  list,
  watch,
  create,
  update,
  patch,
  delete: remove,
  deletecollection: removeCollection,
};

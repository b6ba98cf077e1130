/**
 * LIST in pages, as kube-apiserver serves them from etcd: `limit` items per page, an opaque `continue` token for
 * the rest, `remainingItemCount` when the list is not filtered, and every page of one list consistent with its
 * first one (the same resourceVersion). The objects of a list are held (as references; stored objects are never
 * changed in place) until it expires, as etcd keeps old revisions until it compacts them: after 5 minutes, or
 * when more lists than the bound are in progress; continuing an expired list is answered 410 Expired.
 */
import type { KubeObject } from './types.js';
import { badRequest, expired, type ApiError } from './status.js';

/** How the objects of one LIST are sorted and keyed: `namespace/name`, or `name` for cluster-scoped objects. */
export function listKey(o: KubeObject): string {
  const m = o.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : String(m.name);
}

/** What the client asked for. */
export interface PageRequest {
  /** `limit` as sent (absent, or not a positive integer: everything at once). */
  limit?: string | null;
  continue?: string | null;
  resourceVersion?: string | null;
}

/** One page of a list. */
export interface Page {
  items: KubeObject[];
  resourceVersion: number;
  continue?: string;
  remainingItemCount?: number;
}

/** Options of {@link ListPages}. */
export interface ListPagesOptions {
  /** Clock in ms (default `Date.now`). */
  now?: () => number;
  /** How long a list can be continued (default 5 minutes, kube-apiserver's etcd compaction interval). */
  ttlMs?: number;
  /** Lists held for continuing at once (default 32); the oldest expires first. */
  maxLists?: number;
}

interface Held {
  items: KubeObject[];
  rv: number;
  at: number;
}

interface Token {
  v: string;
  /** The resourceVersion of the list; 0 for a token that continues inconsistently (at the latest state). */
  rv: number;
  /** Every object whose key sorts at or after this one is still to come. */
  start: string;
  /** Which list (type and namespace) the token belongs to. */
  scope: string;
}

const TOKEN_VERSION = 'meta.k8s.io/v1';

function encode(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decode(s: string, scope: string): Token {
  let t: unknown;
  try {
    t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(
      'invalid continue token: it is not one this server issued (pass the metadata.continue of the previous page as it is)',
    );
  }
  const tok = t as Partial<Token> | null;
  if (
    !tok ||
    tok.v !== TOKEN_VERSION ||
    !Number.isSafeInteger(tok.rv) ||
    typeof tok.start !== 'string' ||
    typeof tok.scope !== 'string'
  ) {
    throw badRequest(
      'invalid continue token: it is not one this server issued (pass the metadata.continue of the previous page as it is)',
    );
  }
  if (tok.scope !== scope)
    throw badRequest('invalid continue token: it continues a list of another resource or namespace');
  return tok as Token;
}

/** The first index of `items` (sorted by {@link listKey}) whose key is at or after `start`. */
function lowerBound(items: KubeObject[], start: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (listKey(items[mid]) < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Cuts lists into pages and holds the lists being paged through. */
export class ListPages {
  private readonly held = new Map<string, Held>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxLists: number;

  constructor(opts: ListPagesOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.maxLists = opts.maxLists ?? 32;
  }

  /**
   * A page of the list `scope` (one type, one namespace or all). `current` gives the objects as they are now,
   * sorted by {@link listKey}, with the current resourceVersion; `matches` filters them (selectors), and
   * `filtered` says whether it may drop any (then no `remainingItemCount`, as kube).
   */
  page(
    scope: string,
    req: PageRequest,
    current: () => { items: KubeObject[]; rv: number },
    matches: (o: KubeObject) => boolean,
    filtered: boolean,
  ): Page {
    const limit = parseLimit(req.limit);
    this.expire();
    let list: Held;
    let from = 0;
    if (req.continue) {
      if (req.resourceVersion) throw badRequest('specifying resource version is not allowed when using continue');
      const tok = decode(req.continue, scope);
      const id = `${scope}@${tok.rv}`;
      const held = tok.rv > 0 ? this.held.get(id) : undefined;
      if (held) list = held;
      else {
        const now = current();
        if (tok.rv > 0 && tok.rv !== now.rv) throw this.tooOld(scope, tok);
        list = { items: now.items, rv: now.rv, at: this.now() };
      }
      from = lowerBound(list.items, tok.start);
    } else {
      const now = current();
      list = { items: now.items, rv: now.rv, at: this.now() };
    }

    const items: KubeObject[] = [];
    let i = from;
    for (; i < list.items.length && (limit === undefined || items.length < limit); i++) {
      const o = list.items[i];
      if (matches(o)) items.push(o);
    }
    const page: Page = { items, resourceVersion: list.rv };
    if (limit !== undefined && i < list.items.length) {
      // the page is full; more to come only when some object after it matches
      let next = i;
      if (filtered) while (next < list.items.length && !matches(list.items[next])) next++;
      if (next < list.items.length) {
        page.continue = encode({ v: TOKEN_VERSION, rv: list.rv, start: `${listKey(items.at(-1)!)}\u0000`, scope });
        if (!filtered) page.remainingItemCount = list.items.length - next;
        this.hold(`${scope}@${list.rv}`, list);
      }
    }
    return page;
  }

  private hold(id: string, list: Held): void {
    this.held.delete(id);
    this.held.set(id, list);
    while (this.held.size > this.maxLists) this.held.delete(this.held.keys().next().value!);
  }

  private expire(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [id, h] of this.held) if (h.at < cutoff) this.held.delete(id);
  }

  private tooOld(scope: string, tok: Token): ApiError {
    const err = expired(
      `the continue token is too old: the list it continues (at resourceVersion ${tok.rv}) is no longer held. Start a new list without continue, ` +
        'or continue with the token in this answer (metadata.continue) to get the rest as it is now, which may mix in changes made since the first page',
    );
    err.listContinue = encode({ v: TOKEN_VERSION, rv: 0, start: tok.start, scope });
    return err;
  }
}

function parseLimit(v: string | null | undefined): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid limit ${JSON.stringify(v)}: expected an integer`);
  const n = Number(v);
  return n > 0 ? n : undefined;
}

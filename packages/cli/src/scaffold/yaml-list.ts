/**
 * Switches entries of a top-level list in a kustomization (`resources`, `patches`, `replacements`) on and off the way
 * kubebuilder users do by hand: an entry that is off is kept as commented-out YAML (`#- ../prometheus`), and turning
 * it on uncomments it in place. Works on a `yaml` Document so every other comment and edit of the user survives.
 *
 * The `yaml` library attaches a comment to whatever node follows it (an item, the sequence, the next key) or to the
 * document's tail, so a commented-out entry is searched for in every comment of the document.
 */
import {
  Document,
  Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseDocument,
  parse,
  type Node,
} from 'yaml';

type Commentable = Node & { commentBefore?: string | null; spaceBefore?: boolean };

/**
 * Sets the comment above a node the way the parser represents it: blank lines above the comment are the node's
 * `spaceBefore`, not comment text (the stringifier would drop them there).
 */
function setCommentBefore(node: Commentable, text: string | undefined): void {
  if (text !== undefined) {
    const lines = text.split('\n');
    let blank = 0;
    while (blank < lines.length && lines[blank].trim() === '') blank++;
    if (blank > 0) {
      node.spaceBefore = true;
      text = blank < lines.length ? lines.slice(blank).join('\n') : undefined;
    }
  }
  node.commentBefore = text ?? null;
}

function withoutLeadingBlank(text: string): string | undefined {
  const lines = text.split('\n');
  let blank = 0;
  while (blank < lines.length && lines[blank].trim() === '') blank++;
  return blank < lines.length ? lines.slice(blank).join('\n') : undefined;
}

/** The blank line above a node, as comment text to carry along when the node goes away. */
const blankAbove = (node: Commentable | undefined): string | undefined => (node?.spaceBefore ? '\n' : undefined);

/** Says whether a (plain JSON) list entry is the one being switched. */
export type EntryMatcher = (entry: unknown) => boolean;

/** A place in the document that holds comment text. */
interface CommentSlot {
  get(): string | undefined;
  set(text: string | undefined): void;
  /** Where the slot renders relative to the target list. */
  where: { kind: 'before-item'; index: number } | { kind: 'after-list' } | { kind: 'elsewhere' };
  /** True when a blank line renders above the comment (the node's `spaceBefore`, not part of the text). */
  blankAbove?: () => boolean;
}

interface Found {
  slot: CommentSlot;
  lines: string[];
  start: number;
  end: number;
}

/** Comment text of `lines`; blank lines alone are kept as one blank line (the `yaml` library renders `'\n'` so). */
function joinLines(lines: string[]): string | undefined {
  const text = lines.join('\n');
  if (text.trim() !== '') return text;
  return lines.length > 0 ? '\n' : undefined;
}

function concatComments(...parts: Array<string | undefined>): string | undefined {
  const present = parts.filter((p): p is string => p !== undefined && p !== '');
  if (present.length === 0) return undefined;
  // a blank-line-only part ('\n', see joinLines) is one empty line between the others
  const text = present.map((p) => (p.trim() === '' ? '' : p)).join('\n');
  return text.trim() === '' ? '\n' : text;
}

function rootMap(doc: Document): YAMLMap {
  if (!isMap(doc.contents)) throw new Error('the file is not a YAML mapping');
  return doc.contents;
}

function pairIndex(map: YAMLMap, key: string): number {
  return map.items.findIndex((p) => isPair(p) && (isScalar(p.key) ? p.key.value : p.key) === key);
}

/** Every comment slot of the document, each tagged with its position relative to the list under `key`. */
function commentSlots(doc: Document, key: string): CommentSlot[] {
  const map = rootMap(doc);
  const idx = pairIndex(map, key);
  const seq = idx >= 0 ? map.items[idx].value : undefined;
  const slots: CommentSlot[] = [];
  const elsewhere = { kind: 'elsewhere' } as const;
  const nodeSlots = (node: Node, whereBefore: CommentSlot['where'], whereAfter: CommentSlot['where']): void => {
    const n = node;
    slots.push({ get: () => n.commentBefore ?? undefined, set: (t) => setCommentBefore(n, t), where: whereBefore });
    slots.push({ get: () => n.comment ?? undefined, set: (t) => (n.comment = t), where: whereAfter });
  };
  const walk = (node: unknown): void => {
    if (isPair(node)) {
      walk(node.key);
      walk(node.value);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const isTarget = node === seq;
    if (isSeq(node) || isMap(node)) {
      nodeSlots(
        node,
        isTarget ? { kind: 'before-item', index: 0 } : elsewhere,
        isTarget ? { kind: 'after-list' } : elsewhere,
      );
      node.items.forEach((item, i) => {
        if (isTarget && item && typeof item === 'object' && 'commentBefore' in item) {
          const n = item as Node & { commentBefore?: string | null; comment?: string | null };
          slots.push({
            get: () => n.commentBefore ?? undefined,
            set: (t) => setCommentBefore(n, t),
            where: { kind: 'before-item', index: i },
          });
          slots.push({ get: () => n.comment ?? undefined, set: (t) => (n.comment = t), where: elsewhere });
          walkChildren(item);
        } else {
          walk(item);
        }
      });
      return;
    }
    if (isScalar(node)) nodeSlots(node, elsewhere, elsewhere);
  };
  const walkChildren = (node: unknown): void => {
    if (isSeq(node) || isMap(node)) node.items.forEach((i) => walk(i));
  };
  // The key after the list and the document tail render right after the list's last item.
  map.items.forEach((p, i) => {
    if (i === idx + 1 && idx >= 0 && isScalar(p.key)) {
      const k = p.key;
      slots.push({
        get: () => k.commentBefore ?? undefined,
        set: (t) => setCommentBefore(k, t),
        where: { kind: 'after-list' },
        blankAbove: () => !!(k as Commentable).spaceBefore,
      });
      slots.push({ get: () => k.comment ?? undefined, set: (t) => (k.comment = t), where: elsewhere });
      walk(p.value);
    } else {
      walk(p);
    }
  });
  slots.push({
    get: () => doc.commentBefore ?? undefined,
    set: (t) => (doc.commentBefore = t ?? null),
    where: elsewhere,
  });
  slots.push({
    get: () => doc.comment ?? undefined,
    // the library always renders a blank line above the document's trailing comment
    set: (t) => (doc.comment = (t === undefined ? undefined : withoutLeadingBlank(t)) ?? null),
    where: idx >= 0 && idx === map.items.length - 1 ? { kind: 'after-list' } : elsewhere,
  });
  if (isMap(map)) {
    // the root map's own comments
    slots.push({ get: () => map.comment ?? undefined, set: (t) => (map.comment = t ?? null), where: elsewhere });
  }
  return slots;
}

const leading = (s: string): number => s.length - s.trimStart().length;

/** Finds a commented-out list entry (`- …` plus its more-indented continuation lines) that `match` accepts. */
function findCommentedEntry(slots: CommentSlot[], match: EntryMatcher): Found | undefined {
  for (const slot of slots) {
    const text = slot.get();
    if (!text) continue;
    const lines = text.split('\n');
    for (let j = 0; j < lines.length; j++) {
      const m = /^(\s*)-(\s|$)/.exec(lines[j]);
      if (!m) continue;
      const indent = m[1].length;
      let k = j + 1;
      while (k < lines.length && lines[k].trim() !== '' && leading(lines[k]) >= indent + 2) k++;
      const chunk = lines
        .slice(j, k)
        .map((l) => l.slice(indent))
        .join('\n');
      let value: unknown;
      try {
        value = parse(chunk);
      } catch {
        continue;
      }
      if (Array.isArray(value) && value.length === 1 && match(value[0])) return { slot, lines, start: j, end: k };
    }
  }
  return undefined;
}

/** Finds a commented-out `key:` line (a list whose key itself is commented out, like kubebuilder's `#replacements:`). */
function findCommentedKey(slots: CommentSlot[], key: string): Found | undefined {
  const re = new RegExp(`^\\s*${key}:\\s*$`);
  for (const slot of slots) {
    const text = slot.get();
    if (!text) continue;
    const lines = text.split('\n');
    const j = lines.findIndex((l) => re.test(l));
    if (j >= 0) return { slot, lines, start: j, end: j + 1 };
  }
  return undefined;
}

/** The entry's YAML text (as a one-item block sequence), comments inside it included. */
function entryText(item: Node, indentSeq: boolean): string[] {
  const clone = item.clone() as Node & { commentBefore?: string | null; spaceBefore?: boolean };
  clone.commentBefore = null;
  clone.spaceBefore = false;
  const tmp = new Document();
  const seq = new YAMLSeq();
  seq.items.push(clone);
  tmp.contents = seq;
  return tmp.toString({ lineWidth: 0, indentSeq }).trimEnd().split('\n');
}

/** True when the list under `key` has an active entry accepted by `match`. */
export function hasEntry(doc: Document, key: string, match: EntryMatcher): boolean {
  const seq = doc.get(key, true);
  return isSeq(seq) && seq.items.some((i) => match((i as Node).toJSON()));
}

/** Ensures the list under `key` exists, uncommenting a `#key:` line or appending the key. */
function ensureList(doc: Document, key: string): YAMLSeq {
  const map = rootMap(doc);
  const existing = doc.get(key, true);
  if (isSeq(existing)) return existing;
  if (existing !== undefined && existing !== null && !(isScalar(existing) && existing.value === null)) {
    throw new Error(`"${key}" is not a list`);
  }
  const seq = new YAMLSeq();
  const idx = pairIndex(map, key);
  if (idx >= 0) {
    map.items[idx].value = seq;
    return seq;
  }
  const pair = doc.createPair<Scalar, YAMLSeq>(key, seq);
  pair.key = doc.createNode(key);
  const header = findCommentedKey(commentSlots(doc, key), key);
  if (header) {
    const pre = joinLines(header.lines.slice(0, header.start));
    const rest = joinLines(header.lines.slice(header.end));
    const slotText = header.slot.get();
    const nextKeyIdx = map.items.findIndex((p) => isScalar(p.key) && p.key.commentBefore === slotText);
    header.slot.set(rest);
    setCommentBefore(pair.key, pre);
    if (nextKeyIdx >= 0) {
      map.items.splice(nextKeyIdx, 0, pair);
      return seq;
    }
  }
  map.items.push(pair);
  return seq;
}

/**
 * Turns an entry on. When a commented-out copy exists anywhere in the document it is uncommented where it is
 * (keeping the user's version of it); otherwise `entry` is appended. Returns false when it already was on.
 */
export function enableEntry(doc: Document, key: string, match: EntryMatcher, entry: unknown): boolean {
  if (hasEntry(doc, key, match)) return false;
  const seq = ensureList(doc, key);
  const found = findCommentedEntry(commentSlots(doc, key), match);
  if (!found) {
    seq.items.push(doc.createNode(entry));
    return true;
  }
  const dedent = leading(found.lines[found.start]);
  const chunk = found.lines
    .slice(found.start, found.end)
    .map((l) => l.slice(dedent))
    .join('\n');
  const parsed = parseDocument(chunk).contents as YAMLSeq;
  const node = parsed.items[0] as Node & { commentBefore?: string | null };
  const pre = joinLines(found.lines.slice(0, found.start));
  const post = joinLines(found.lines.slice(found.end));
  const where = found.slot.where;
  if (where.kind === 'before-item') {
    const target = seq.items[where.index] as (Node & { commentBefore?: string | null }) | undefined;
    if (found.slot.get() === target?.commentBefore) {
      // the block sat right above item `index`
      setCommentBefore(node, pre);
      setCommentBefore(target!, post);
    } else {
      // the block sat in the sequence's own leading comment (above the first item)
      found.slot.set(pre);
      if (target) {
        const above = blankAbove(target);
        target.spaceBefore = false;
        setCommentBefore(target, concatComments(post, above, target.commentBefore ?? undefined));
      } else seq.comment = concatComments(post, seq.comment ?? undefined);
    }
    seq.items.splice(where.index, 0, node);
  } else if (where.kind === 'after-list') {
    // the blank line above the comment (the next key's) now opens the uncommented entry's comment
    const blank = found.slot.blankAbove?.() ?? false;
    setCommentBefore(node, pre);
    if (blank) node.spaceBefore = true;
    found.slot.set(post);
    seq.items.push(node);
  } else {
    found.slot.set(concatComments(pre, post));
    seq.items.push(node);
  }
  return true;
}

/**
 * Turns an entry off: removes it from the list and keeps it, with the comment above it, as commented-out YAML at the
 * same place so it can be turned on again. An emptied list is commented out as well. Returns false when it was off.
 */
/** `indentSeq`: write the commented-out copy with nested sequences indented (match the file's style). */
export function disableEntry(doc: Document, key: string, match: EntryMatcher, indentSeq = false): boolean {
  const map = rootMap(doc);
  const seq = doc.get(key, true);
  if (!isSeq(seq)) return false;
  const i = seq.items.findIndex((it) => match((it as Node).toJSON()));
  if (i < 0) return false;
  const item = seq.items[i] as Commentable;
  const commented = concatComments(
    blankAbove(item),
    item.commentBefore ?? undefined,
    entryText(item, indentSeq).join('\n'),
  )!;
  seq.items.splice(i, 1);
  const idx = pairIndex(map, key);
  const afterList = (text: string): void => {
    const next = map.items[idx + 1];
    if (next && isScalar(next.key)) {
      // a blank line above the next key stays between the commented-out entry (now ending the list) and the key
      const blank = blankAbove(next.key);
      (next.key as Commentable).spaceBefore = false;
      setCommentBefore(next.key as Commentable, concatComments(text, blank, next.key.commentBefore ?? undefined));
    } else doc.comment = concatComments(withoutLeadingBlank(text), doc.comment ?? undefined) ?? null;
  };
  if (seq.items.length > 0) {
    const next = seq.items[i] as (Node & { commentBefore?: string | null }) | undefined;
    if (next) {
      const above = blankAbove(next);
      next.spaceBefore = false;
      setCommentBefore(next, concatComments(commented, above, next.commentBefore ?? undefined));
    } else afterList(concatComments(seq.comment ?? undefined, commented)!);
    if (!next) seq.comment = null;
    return true;
  }
  // last entry gone: comment out the key too
  const pair = map.items[idx] as Pair<Scalar, YAMLSeq>;
  const text = concatComments(
    blankAbove(pair.key),
    pair.key.commentBefore ?? undefined,
    `${key}:`,
    seq.commentBefore ?? undefined,
    commented,
    seq.comment ?? undefined,
  )!;
  afterList(text);
  map.items.splice(idx, 1);
  return true;
}

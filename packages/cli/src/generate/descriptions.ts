/**
 * controller-gen's `crd:maxDescLen`: descriptions cut to a byte budget (a CRD holding all of a PodSpec's upstream
 * docs can pass the 256 KiB an annotation of `kubectl apply` may hold, or etcd's request limit), or removed with 0.
 */
import type { Schema } from './schema.js';

const SENTENCE_END = /\p{Sentence_Terminal}/u;
const SPACE = /\s/u;

/**
 * One description cut to `maxLen` UTF-8 bytes as controller-gen cuts it: back to the last sentence-ending
 * character if the cut text has one (kept, no ellipsis), else back to the last whitespace plus `...`, else the cut
 * itself plus `...`. Text within the budget is unchanged.
 */
export function truncateDescription(text: string, maxLen: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxLen) return text;
  // the longest prefix within the budget that does not split a character (Go cuts bytes; a split rune would be
  // invalid UTF-8 in the YAML)
  let cut = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxLen) break;
    cut += ch;
    bytes += n;
  }
  const chars = [...cut];
  for (let i = chars.length - 1; i > 0; i--) if (SENTENCE_END.test(chars[i])) return chars.slice(0, i + 1).join('');
  for (let i = chars.length - 1; i > 0; i--) if (SPACE.test(chars[i])) return `${chars.slice(0, i).join('')}...`;
  return `${cut}...`;
}

/**
 * A schema with every description cut to `maxLen` bytes (`0` removes them). Walks schema nodes only, so a
 * property that happens to be named `description` keeps its schema.
 */
export function truncateDescriptions(schema: Schema, maxLen: number): Schema {
  const out: Schema = { ...schema };
  if (typeof out.description === 'string') {
    if (maxLen === 0) delete out.description;
    else out.description = truncateDescription(out.description, maxLen);
  }
  const walkMap = (m: unknown) =>
    Object.fromEntries(
      Object.entries(m as Record<string, Schema>).map(([k, s]) => [k, truncateDescriptions(s, maxLen)]),
    );
  if (out.properties) out.properties = walkMap(out.properties);
  if (out.items && typeof out.items === 'object') out.items = truncateDescriptions(out.items as Schema, maxLen);
  if (out.additionalProperties && typeof out.additionalProperties === 'object')
    out.additionalProperties = truncateDescriptions(out.additionalProperties as Schema, maxLen);
  if (out.not && typeof out.not === 'object') out.not = truncateDescriptions(out.not as Schema, maxLen);
  for (const j of ['allOf', 'anyOf', 'oneOf'])
    if (Array.isArray(out[j])) out[j] = (out[j] as Schema[]).map((s) => truncateDescriptions(s, maxLen));
  return out;
}

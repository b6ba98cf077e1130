/**
 * CEL validation rules of CRD schemas (`x-kubernetes-validations`), evaluated with Buf's CEL implementation
 * (`@bufbuild/cel`, conformance-tested against cel-spec, RE2 regular expressions as Kubernetes uses them) and
 * reported as kube-apiserver 1.32 reports them: `<path>: Invalid value: "<schema type>": failed rule: <rule>`, or the
 * rule's `message` / `messageExpression`, with its `reason` and `fieldPath`.
 *
 * Values are handed to CEL typed by the schema, as Kubernetes does: `integer` as CEL int, `number` as double,
 * objects as maps. Transition rules (those using `oldSelf`) run only on updates that have an old value. The
 * Kubernetes CEL libraries beyond the standard and strings extension (quantity, url, ip, lists) are not available.
 */
import { createRequire } from 'node:module';
import type { CelInput } from '@bufbuild/cel';
import type { FieldCause } from './status.js';
import type { StructuralSchema, ValidationRule } from './types.js';

type Json = unknown;

type Cel = typeof import('@bufbuild/cel');

/**
 * The CEL implementation, loaded on the first rule (synchronously, through its CommonJS build): about 100 ms of
 * imports that an authority without CRD rules never pays.
 */
let cel: { lib: Cel; env: ReturnType<Cel['celEnv']> } | undefined;
function loadCel(): NonNullable<typeof cel> {
  if (!cel) {
    const require = createRequire(import.meta.url);
    const lib = require('@bufbuild/cel') as Cel;
    const ext = require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext');
    cel = { lib, env: lib.celEnv({ funcs: ext.strings }) };
  }
  return cel;
}

type Program = (ctx: Record<string, CelInput>) => unknown;

/** Compiled rules by their text; bounded, as CRDs (and so rules) come from API clients. */
const programs = new Map<string, Program | Error>();
const MAX_PROGRAMS = 1000;

function compile(expr: string): Program | Error {
  let p = programs.get(expr);
  if (p) return p;
  try {
    const { lib, env } = loadCel();
    p = lib.plan(env, lib.parse(expr));
  } catch (err) {
    p = err instanceof Error ? err : new Error(String(err));
  }
  if (programs.size >= MAX_PROGRAMS) programs.delete(programs.keys().next().value!);
  programs.set(expr, p);
  return p;
}

const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON value as CEL sees it under its schema. */
export function toCel(v: Json, s: StructuralSchema | undefined): CelInput {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    const integer = s?.type === 'integer' || ((!s?.type || s['x-kubernetes-int-or-string']) && Number.isInteger(v));
    return integer && Number.isSafeInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x) => toCel(x, s?.items));
  if (isObj(v)) {
    const extra = isObj(s?.additionalProperties) ? s.additionalProperties : undefined;
    return new Map(
      Object.entries(v).map(([k, x]) => [
        k,
        toCel(x, (s?.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined) ?? extra),
      ]),
    );
  }
  return null;
}

function schemaType(v: Json, s: StructuralSchema): string {
  if (s.type) return s.type;
  if (Array.isArray(v)) return 'array';
  if (isObj(v)) return 'object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/**
 * The errors of one node's rules. `field` is the node's path (`''` for the object's root, reported as `<nil>`);
 * `old` the node's old value on an update (undefined: none).
 */
export function evaluateRules(value: Json, s: StructuralSchema, field: string, old: Json): FieldCause[] {
  const rules = (s as { 'x-kubernetes-validations'?: ValidationRule[] })['x-kubernetes-validations'] ?? [];
  const out: FieldCause[] = [];
  if (value === null || value === undefined) return out;
  const type = schemaType(value, s);
  for (const r of rules) {
    if (!r || typeof r.rule !== 'string') continue;
    const transition = /\boldSelf\b/.test(r.rule);
    if (transition && old === undefined && !r.optionalOldSelf) continue;
    const vars: Record<string, CelInput> = { self: toCel(value, s) };
    if (transition) vars.oldSelf = old === undefined ? null : toCel(old, s);
    const path = r.fieldPath ? (field ? `${field}${r.fieldPath}` : r.fieldPath.replace(/^\./, '')) : field || '<nil>';
    const program = compile(r.rule);
    const result = program instanceof Error ? program : program(vars);
    if (result === true) continue;
    if (result instanceof Error || loadCel().lib.isCelError(result)) {
      const why = result instanceof Error ? result.message : String((result as { message?: string }).message ?? result);
      out.push({
        field: path,
        message: `Invalid value: "${type}": ${why} evaluating rule: ${r.rule}`,
        reason: 'FieldValueInvalid',
      });
      continue;
    }
    let text = r.message || `failed rule: ${r.rule}`;
    if (r.messageExpression) {
      const m = compile(r.messageExpression);
      const said = m instanceof Error ? undefined : m(vars);
      if (typeof said === 'string' && said.trim()) text = said;
    }
    switch (r.reason) {
      case 'FieldValueForbidden':
        out.push({ field: path, message: `Forbidden: ${text}`, reason: r.reason });
        break;
      case 'FieldValueRequired':
        out.push({ field: path, message: `Required value: ${text}`, reason: r.reason });
        break;
      case 'FieldValueDuplicate':
        out.push({ field: path, message: `Duplicate value: "${type}"`, reason: r.reason });
        break;
      default:
        out.push({ field: path, message: `Invalid value: "${type}": ${text}`, reason: 'FieldValueInvalid' });
    }
  }
  return out;
}

/**
 * TypeScript types to CRD schemas, as controller-gen maps Go types: strings, booleans, integers named by `int32` /
 * `int64` (or a `Type` marker), arrays, string-keyed records (`additionalProperties`), interfaces and type literals
 * inlined (no `$ref`), string-literal unions as `enum`, `| null` as `nullable`, optional `?` fields left out of
 * `required`, Kubernetes' well-known types with their fixed schemas, doc comments as descriptions; then each
 * field's and type's markers applied in controller-gen's order.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as TS from 'typescript';
import { MarkerError, type Marker, type MarkerSite } from './markers.js';
import type { ApiSources } from './source.js';

/** A schema node (apiextensions' JSONSchemaProps, as plain JSON). */
export type Schema = Record<string, unknown>;

/** Directories whose nearest package.json names this package: its types (ObjectMeta, int32, …) are the known ones. */
const OWN_DIRS = new Map<string, boolean>();

/** Whether a file belongs to the ctrlmetrics package (whichever copy: the project's, a global one, this source tree). */
export function isCtrlmetricsFile(file: string): boolean {
  let dir = dirname(file);
  const seen: string[] = [];
  for (;;) {
    const known = OWN_DIRS.get(dir);
    if (known !== undefined) return remember(seen, known);
    seen.push(dir);
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      let name: unknown;
      try {
        name = (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name;
      } catch {
        name = undefined;
      }
      return remember(seen, name === 'ctrlmetrics');
    }
    const up = dirname(dir);
    if (up === dir) return remember(seen, false);
    dir = up;
  }
}

function remember(dirs: string[], value: boolean): boolean {
  for (const d of dirs) OWN_DIRS.set(d, value);
  return value;
}

const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** The fixed schemas of the well-known types (controller-gen's known types and `metav1.Condition`). */
const KNOWN: Record<string, () => Schema> = {
  ObjectMeta: () => ({ type: 'object' }),
  Time: () => ({ type: 'string', format: 'date-time' }),
  MicroTime: () => ({ type: 'string', format: 'date-time' }),
  Duration: () => ({ type: 'string' }),
  Quantity: () => ({
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  }),
  IntOrString: () => ({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true }),
  RawExtension: () => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
  JSONValue: () => ({ 'x-kubernetes-preserve-unknown-fields': true }),
  int32: () => ({ type: 'integer', format: 'int32' }),
  int64: () => ({ type: 'integer', format: 'int64' }),
  Condition: () => ({
    type: 'object',
    required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
    properties: {
      lastTransitionTime: { type: 'string', format: 'date-time' },
      message: { type: 'string', maxLength: 32768 },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: { type: 'string', maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      type: {
        type: 'string',
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      },
    },
  }),
};

const XVALIDATION_REASONS = ['FieldValueRequired', 'FieldValueInvalid', 'FieldValueForbidden', 'FieldValueDuplicate'];

/** Marker names applied before the others on a node (controller-gen's priority 9). */
const FIRST = new Set(['kubebuilder:validation:Type', 'kubebuilder:validation:XIntOrString', 'listType', 'default']);

/** Builds schemas for the types of one program. */
export class SchemaBuilder {
  private readonly stack: string[] = [];

  constructor(private readonly src: ApiSources) {}

  private get ts(): typeof TS {
    return this.src.ts;
  }

  private site(node: TS.Node): MarkerSite {
    const sf = node.getSourceFile();
    return { file: this.src.display(sf.fileName), line: this.src.lineOf(sf, node.getStart(sf)) };
  }

  private fail(node: TS.Node, message: string): MarkerError {
    return new MarkerError(this.site(node), message);
  }

  /** Whether a declaration is one of this package's own (so a well-known type). */
  private isOwn(decl: TS.Declaration): boolean {
    return isCtrlmetricsFile(decl.getSourceFile().fileName);
  }

  /** The declaration a type reference names, through imports and re-exports. */
  private declarationOf(node: TS.TypeReferenceNode): TS.Declaration | undefined {
    let sym = this.src.checker.getSymbolAtLocation(node.typeName);
    if (sym && sym.flags & this.ts.SymbolFlags.Alias) sym = this.src.checker.getAliasedSymbol(sym);
    return sym?.declarations?.[0];
  }

  /**
   * The schema of a field: its type's schema (or `{}` for `Schemaless`), its doc as the description (winning over
   * the type's), its markers applied.
   */
  field(decl: TS.PropertySignature | TS.PropertyDeclaration, name: string): { schema: Schema; required: boolean } {
    const c = this.src.commentsOf(decl);
    const has = (n: string) => c.markers.some((m) => m.name === n);
    if (!decl.type) throw this.fail(decl, `field ${JSON.stringify(name)} has no type`);
    const typeMarker = c.markers.some((m) => m.name === 'kubebuilder:validation:Type');
    let schema = has('kubebuilder:validation:Schemaless')
      ? {}
      : this.typeNode(decl.type, { field: name, typed: typeMarker });
    if (c.doc !== undefined) schema = { ...schema, description: c.doc };
    const fromType = { ...schema };
    this.apply(schema, c.markers, decl);
    schema = keepTypeLimits(fromType, schema);
    let required = !decl.questionToken;
    if (has('kubebuilder:validation:Optional')) required = false;
    else if (has('kubebuilder:validation:Required')) required = true;
    else if (has('optional')) required = false;
    else if (has('required')) required = true;
    return { schema, required };
  }

  /** The object schema of an interface's or type literal's properties (inherited ones included). */
  objectOf(node: TS.Node): Schema {
    const type = this.src.checker.getTypeAtLocation(node);
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const p of this.src.checker.getPropertiesOfType(type)) {
      const d = p.valueDeclaration ?? p.declarations?.[0];
      if (!d || !(this.ts.isPropertySignature(d) || this.ts.isPropertyDeclaration(d))) continue;
      const name = p.getName();
      const f = this.field(d, name);
      properties[name] = f.schema;
      if (f.required) required.push(name);
    }
    return {
      type: 'object',
      ...(Object.keys(properties).length ? { properties } : {}),
      ...(required.length ? { required: [...new Set(required)].sort() } : {}),
    };
  }

  /** The schema of a type as written. */
  typeNode(node: TS.TypeNode, ctx: { field?: string; typed?: boolean }): Schema {
    const ts = this.ts;
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.NumberKeyword:
        if (ctx.typed) return { type: 'number' };
        throw this.fail(
          node,
          `${ctx.field ? `field ${JSON.stringify(ctx.field)}` : 'a type'} is a number: say which, with int32 or int64 (from ctrlmetrics) or // +kubebuilder:validation:Type=integer (or =number for a float)`,
        );
      case ts.SyntaxKind.AnyKeyword:
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.ObjectKeyword:
        throw this.fail(
          node,
          `${ctx.field ? `field ${JSON.stringify(ctx.field)}` : 'a type'} has no schema (${node.getText()}): use JSONValue or RawExtension from ctrlmetrics, or an interface`,
        );
    }
    if (ts.isParenthesizedTypeNode(node)) return this.typeNode(node.type, ctx);
    if (ts.isArrayTypeNode(node))
      return { type: 'array', items: this.typeNode(node.elementType, { typed: ctx.typed }) };
    if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword)
      return this.typeNode(node.type, ctx);
    if (ts.isTypeLiteralNode(node)) return this.objectOf(node);
    if (ts.isLiteralTypeNode(node)) {
      if (ts.isStringLiteral(node.literal)) return { type: 'string', enum: [node.literal.text] };
      if (node.literal.kind === ts.SyntaxKind.TrueKeyword || node.literal.kind === ts.SyntaxKind.FalseKeyword)
        return { type: 'boolean' };
      throw this.fail(node, `literal type ${node.getText()} has no CRD schema`);
    }
    if (ts.isUnionTypeNode(node)) return this.union(node, ctx);
    if (ts.isTypeQueryNode(node)) {
      const t = this.src.checker.getTypeAtLocation(node);
      if (t.flags & ts.TypeFlags.StringLike) return { type: 'string' };
      throw this.fail(node, `${node.getText()} has no CRD schema`);
    }
    if (ts.isTypeReferenceNode(node)) return this.reference(node, ctx);
    throw this.fail(
      node,
      `type ${node.getText()} has no CRD schema (use interfaces, arrays, records, string-literal unions and ctrlmetrics' API types)`,
    );
  }

  private union(node: TS.UnionTypeNode, ctx: { field?: string; typed?: boolean }): Schema {
    const ts = this.ts;
    let nullable = false;
    const rest = node.types.filter((t) => {
      if (t.kind === ts.SyntaxKind.UndefinedKeyword) return false;
      if (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) {
        nullable = true;
        return false;
      }
      return true;
    });
    let schema: Schema;
    if (rest.length === 1) schema = this.typeNode(rest[0], ctx);
    else if (rest.every((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal))) {
      schema = { type: 'string', enum: rest.map((t) => ((t as TS.LiteralTypeNode).literal as TS.StringLiteral).text) };
    } else if (
      rest.every(
        (t) =>
          ts.isLiteralTypeNode(t) &&
          (t.literal.kind === ts.SyntaxKind.TrueKeyword || t.literal.kind === ts.SyntaxKind.FalseKeyword),
      )
    ) {
      schema = { type: 'boolean' };
    } else {
      throw this.fail(
        node,
        `${ctx.field ? `field ${JSON.stringify(ctx.field)}: ` : ''}the union ${node.getText()} is not a structural schema: use string literals (an enum), IntOrString, or optional fields with an XValidation rule`,
      );
    }
    return nullable ? { ...schema, nullable: true } : schema;
  }

  private reference(node: TS.TypeReferenceNode, ctx: { field?: string; typed?: boolean }): Schema {
    const ts = this.ts;
    const name = node.typeName.getText();
    const args = node.typeArguments ?? [];
    if ((name === 'Array' || name === 'ReadonlyArray') && args.length === 1)
      return { type: 'array', items: this.typeNode(args[0], { typed: ctx.typed }) };
    if (name === 'Record' && args.length === 2) {
      const key = args[0];
      if (key.kind !== ts.SyntaxKind.StringKeyword)
        throw this.fail(node, `map keys must be strings, not ${key.getText()}`);
      return { type: 'object', additionalProperties: this.typeNode(args[1], { typed: ctx.typed }) };
    }
    const decl = this.declarationOf(node);
    if (!decl) throw this.fail(node, `cannot resolve the type ${name}`);
    const declName = (decl as TS.NamedDeclaration).name?.getText() ?? name;
    if (this.isOwn(decl) && KNOWN[declName]) return KNOWN[declName]();
    const key = `${decl.getSourceFile().fileName}#${declName}`;
    if (this.stack.includes(key)) {
      throw this.fail(
        node,
        `the type ${declName} contains itself: a recursive type has no structural schema; mark the field // +kubebuilder:validation:Schemaless and // +kubebuilder:pruning:PreserveUnknownFields`,
      );
    }
    this.stack.push(key);
    try {
      let schema: Schema;
      if (ts.isInterfaceDeclaration(decl)) schema = this.objectOf(decl);
      else if (ts.isTypeAliasDeclaration(decl)) schema = this.typeNode(decl.type, { ...ctx, field: undefined });
      else if (ts.isEnumDeclaration(decl)) schema = this.enumOf(decl);
      else throw this.fail(node, `the type ${declName} is not an interface, a type alias or an enum`);
      const c = this.src.commentsOf(decl);
      if (c.doc !== undefined) schema = { ...schema, description: c.doc };
      this.apply(
        schema,
        c.markers.filter((m) => !isCrdMarker(m.name)),
        decl,
      );
      return schema;
    } finally {
      this.stack.pop();
    }
  }

  private enumOf(decl: TS.EnumDeclaration): Schema {
    const values = decl.members.map((m) => {
      const v = this.src.checker.getConstantValue(m);
      if (typeof v !== 'string') throw this.fail(m, `enum ${decl.name.getText()}: only string enums have a CRD schema`);
      return v;
    });
    return { type: 'string', enum: values };
  }

  /** Applies markers to a schema node in controller-gen's order (type-changing ones first, `items:` forms last). */
  apply(schema: Schema, markers: Marker[], node: TS.Node): void {
    const own = markers.filter((m) => !m.name.startsWith('kubebuilder:validation:items:'));
    const items = markers.filter((m) => m.name.startsWith('kubebuilder:validation:items:'));
    const ordered = [...own.filter((m) => FIRST.has(m.name)), ...own.filter((m) => !FIRST.has(m.name))];
    for (const m of ordered) applyMarker(schema, m, m.name);
    // the API server refuses a CRD whose default breaks its own field's schema: say so here, at the marker
    const defaulted = ordered.find((m) => m.name === 'kubebuilder:default' || m.name === 'default');
    if (defaulted && schema.default !== undefined) {
      const why = defaultProblem(schema, schema.default);
      if (why)
        throw new MarkerError(
          defaulted,
          `the default ${JSON.stringify(schema.default)} breaks the field's own schema: ${why} (the API server would refuse this CRD)`,
        );
    }
    if (items.length) {
      if (schema.type !== 'array' || !schema.items) {
        const m = items[0];
        throw new MarkerError(
          m,
          `must apply ${m.name.slice('kubebuilder:validation:items:'.length).toLowerCase()} to an array value, found ${String(schema.type ?? 'no type')}`,
        );
      }
      for (const m of items)
        applyMarker(
          schema.items as Schema,
          m,
          `kubebuilder:validation:${m.name.slice('kubebuilder:validation:items:'.length)}`,
        );
    }
    void node;
  }
}

/**
 * Why `v` does not validate against `s` (its type, enum, bounds, lengths, pattern, items and properties), as
 * kube-apiserver checks a CRD's defaults; undefined when it does.
 */
export function defaultProblem(s: Schema, v: unknown, at = ''): string | undefined {
  const where = at ? ` at ${at}` : '';
  if (v === null) return s.nullable === true ? undefined : `null${where} is not allowed (the field is not nullable)`;
  if (s['x-kubernetes-int-or-string'] === true) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v)))
      return `${JSON.stringify(v)}${where} is neither an integer nor a string`;
  } else {
    const type = s.type as string | undefined;
    const is: Record<string, boolean> = {
      integer: typeof v === 'number' && Number.isInteger(v),
      number: typeof v === 'number',
      string: typeof v === 'string',
      boolean: typeof v === 'boolean',
      array: Array.isArray(v),
      object: typeof v === 'object' && !Array.isArray(v),
    };
    if (type && type in is && !is[type]) return `${JSON.stringify(v)}${where} is not of type ${type}`;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    return `${JSON.stringify(v)}${where} is not one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  if (typeof v === 'number') {
    const min = s.minimum as number | undefined;
    const max = s.maximum as number | undefined;
    if (min !== undefined && (s.exclusiveMinimum === true ? v <= min : v < min))
      return `${v}${where} should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${min}`;
    if (max !== undefined && (s.exclusiveMaximum === true ? v >= max : v > max))
      return `${v}${where} should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${max}`;
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf))
      return `${v}${where} should be a multiple of ${s.multipleOf}`;
  }
  if (typeof v === 'string') {
    const length = [...v].length;
    if (typeof s.minLength === 'number' && length < s.minLength)
      return `${JSON.stringify(v)}${where} should be at least ${s.minLength} chars long`;
    if (typeof s.maxLength === 'number' && length > s.maxLength)
      return `${JSON.stringify(v)}${where} may not be more than ${s.maxLength} chars long`;
    if (typeof s.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {
        re = undefined; // a pattern JavaScript cannot read (RE2 syntax) is left to the API server
      }
      if (re && !re.test(v)) return `${JSON.stringify(v)}${where} should match '${s.pattern}'`;
    }
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === 'number' && v.length < s.minItems)
      return `${v.length} items${where}: should have at least ${s.minItems}`;
    if (typeof s.maxItems === 'number' && v.length > s.maxItems)
      return `${v.length} items${where}: should have at most ${s.maxItems}`;
    if (s.items && typeof s.items === 'object') {
      for (const [i, x] of v.entries()) {
        const why = defaultProblem(s.items as Schema, x, `${at}[${i}]`);
        if (why) return why;
      }
    }
  } else if (typeof v === 'object' && v !== null) {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const [k, x] of Object.entries(v)) {
      const ps = Object.hasOwn(props, k)
        ? props[k]
        : typeof s.additionalProperties === 'object'
          ? (s.additionalProperties as Schema)
          : undefined;
      if (!ps) continue;
      const why = defaultProblem(ps, x, at ? `${at}.${k}` : k);
      if (why) return why;
    }
  }
  return undefined;
}

/** Value validations a field's markers may set on a node its type already limits. */
const LIMITS = [
  'exclusiveMaximum',
  'exclusiveMinimum',
  'format',
  'maxItems',
  'maxLength',
  'maxProperties',
  'maximum',
  'minItems',
  'minLength',
  'minProperties',
  'minimum',
  'multipleOf',
  'pattern',
];

/**
 * controller-gen never lets a field loosen its type: where the field's markers set a limit the type already sets
 * to another value, both are kept, as an `allOf` of the type's and the field's limits (the type's enum wins).
 */
function keepTypeLimits(fromType: Schema, withField: Schema): Schema {
  // an enum is not combined: the type's wins
  if (fromType.enum !== undefined) withField = { ...withField, enum: fromType.enum };
  const conflicts = LIMITS.filter(
    (k) =>
      fromType[k] !== undefined &&
      withField[k] !== undefined &&
      JSON.stringify(fromType[k]) !== JSON.stringify(withField[k]),
  );
  if (!conflicts.length) return withField;
  const out = { ...withField };
  const typeSide: Schema = {};
  const fieldSide: Schema = {};
  for (const k of conflicts) {
    typeSide[k] = fromType[k];
    fieldSide[k] = withField[k];
    delete out[k];
  }
  out.allOf = [...((out.allOf as Schema[]) ?? []), typeSide, fieldSide];
  return out;
}

/** Markers about the CRD rather than a schema node. */
export function isCrdMarker(name: string): boolean {
  return (
    name === 'kubebuilder:resource' ||
    name.startsWith('kubebuilder:subresource:') ||
    name === 'kubebuilder:printcolumn' ||
    name === 'kubebuilder:storageversion'
  );
}

const isNumeric = (s: Schema) => s.type === 'integer' || s.type === 'number';
const isText = (s: Schema) => s.type === 'string' || s['x-kubernetes-int-or-string'] === true;

function applyMarker(s: Schema, m: Marker, name: string): void {
  const fail = (why: string) => new MarkerError(m, why);
  const short = name.replace(/^kubebuilder:validation:/, '');
  const v = m.value;
  const numeric = (kw: string) => {
    if (!isNumeric(s))
      throw fail(`must apply ${kw.toLowerCase()} to a numeric value, found ${String(s.type ?? 'no type')}`);
    if (s.type === 'integer' && typeof v === 'number' && !Number.isInteger(v))
      throw fail(`cannot apply non-integral ${kw.toLowerCase()} validation (${v}) to integer value`);
  };
  switch (name) {
    case 'kubebuilder:validation:Minimum':
    case 'kubebuilder:validation:Maximum':
    case 'kubebuilder:validation:MultipleOf':
      numeric(short);
      s[short === 'MultipleOf' ? 'multipleOf' : short.toLowerCase()] = v;
      return;
    case 'kubebuilder:validation:ExclusiveMinimum':
    case 'kubebuilder:validation:ExclusiveMaximum':
      numeric(short);
      if (v === true) s[short === 'ExclusiveMinimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] = true;
      return;
    case 'kubebuilder:validation:MinLength':
    case 'kubebuilder:validation:MaxLength':
    case 'kubebuilder:validation:Pattern':
      if (!isText(s))
        throw fail(
          `must apply ${short.toLowerCase()} to a textual value, found type ${JSON.stringify(String(s.type ?? ''))}`,
        );
      s[{ MinLength: 'minLength', MaxLength: 'maxLength', Pattern: 'pattern' }[short]!] = v;
      return;
    case 'kubebuilder:validation:MinItems':
    case 'kubebuilder:validation:MaxItems':
      if (s.type !== 'array') throw fail(`must apply ${short.toLowerCase()} to an array`);
      s[short === 'MinItems' ? 'minItems' : 'maxItems'] = v;
      return;
    case 'kubebuilder:validation:UniqueItems':
      if (s.type !== 'array') throw fail('must apply uniqueitems to an array');
      if (v === true)
        throw fail(
          'uniqueItems cannot be set to true since the runtime complexity becomes quadratic (the API server refuses it): use // +listType=set',
        );
      return;
    case 'kubebuilder:validation:MinProperties':
    case 'kubebuilder:validation:MaxProperties':
      if (s.type !== 'object') throw fail(`must apply ${short.toLowerCase()} to an object`);
      s[short === 'MinProperties' ? 'minProperties' : 'maxProperties'] = v;
      return;
    case 'kubebuilder:validation:Enum':
      s.enum = Array.isArray(v) ? v : [v];
      return;
    case 'kubebuilder:validation:Format':
      s.format = v;
      return;
    case 'kubebuilder:validation:Type':
      if (!['string', 'number', 'integer', 'boolean', 'array', 'object'].includes(String(v)))
        throw fail(`type must be one of string, number, integer, boolean, array, object; got ${JSON.stringify(v)}`);
      s.type = v;
      if (v !== 'integer' && v !== 'number') delete s.format;
      return;
    case 'kubebuilder:validation:XPreserveUnknownFields':
    case 'kubebuilder:pruning:PreserveUnknownFields':
      s['x-kubernetes-preserve-unknown-fields'] = true;
      return;
    case 'kubebuilder:validation:XEmbeddedResource':
    case 'kubebuilder:validation:EmbeddedResource':
      s['x-kubernetes-embedded-resource'] = true;
      return;
    case 'kubebuilder:validation:XIntOrString':
      s['x-kubernetes-int-or-string'] = true;
      if (s.type !== undefined) {
        delete s.type;
        delete s.format;
        s.anyOf = [{ type: 'integer' }, { type: 'string' }];
      }
      return;
    case 'kubebuilder:validation:XValidation': {
      const a = v as Record<string, unknown>;
      if (a.reason !== undefined && !XVALIDATION_REASONS.includes(String(a.reason)))
        throw fail(`invalid reason ${JSON.stringify(a.reason)}: one of ${XVALIDATION_REASONS.join(', ')}`);
      const rule: Schema = {};
      for (const k of ['fieldPath', 'message', 'messageExpression', 'optionalOldSelf', 'reason', 'rule'])
        if (a[k] !== undefined) rule[k] = a[k];
      s['x-kubernetes-validations'] = [...((s['x-kubernetes-validations'] as Schema[]) ?? []), rule];
      return;
    }
    case 'kubebuilder:default':
    case 'default':
      s.default =
        s.type === 'array' && v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? [] : v;
      return;
    case 'kubebuilder:example':
      s.example = v;
      return;
    case 'kubebuilder:title':
      s.title = v;
      return;
    case 'nullable':
      s.nullable = true;
      return;
    case 'listType':
      if (s.type !== 'array') throw fail('must apply listType to an array');
      if (!['atomic', 'set', 'map'].includes(String(v))) throw fail('ListType must be either "map", "set" or "atomic"');
      s['x-kubernetes-list-type'] = v;
      return;
    case 'listMapKey':
      if (s.type !== 'array' || s['x-kubernetes-list-type'] !== 'map')
        throw fail('must apply listMapKey to an associative-list');
      s['x-kubernetes-list-map-keys'] = [...((s['x-kubernetes-list-map-keys'] as string[]) ?? []), v];
      return;
    case 'mapType':
    case 'structType':
      if (s.type !== 'object' && !(name === 'structType' && s.type === undefined))
        throw fail(`must apply ${name} to an object`);
      if (!['granular', 'atomic'].includes(String(v)))
        throw fail(`${name === 'mapType' ? 'MapType' : 'StructType'} must be either "granular" or "atomic"`);
      s['x-kubernetes-map-type'] = v;
      return;
    case 'optional':
    case 'required':
    case 'kubebuilder:validation:Optional':
    case 'kubebuilder:validation:Required':
    case 'kubebuilder:validation:Schemaless':
    case 'kubebuilder:object:root':
      return;
    default:
      if (isCrdMarker(name)) throw fail(`marker +${name} belongs on the kind's type, not on a field`);
      throw fail(`marker +${name} does not apply to a field or type`);
  }
}

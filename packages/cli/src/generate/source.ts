/**
 * Reading API definitions with the TypeScript compiler API: the program over the given paths, each declaration's
 * doc comment (its description, as controller-gen keeps it: line breaks kept, markers, `TODO` lines and what
 * follows `---` dropped) and the `//` markers written right above it, and the file-level markers (`+groupName`,
 * `+versionName`, `+kubebuilder:rbac`) everywhere else. TypeScript is loaded only here, never by a manager.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as TS from 'typescript';
import { isMarkerLine, MarkerError, parseMarker, type Marker } from './markers.js';

export type TypeScript = typeof TS;

/** Markers that belong to the file (package, in Go) wherever they are written. */
const FILE_MARKERS = new Set([
  'groupName',
  'versionName',
  'kubebuilder:skip',
  'kubebuilder:rbac',
  'kubebuilder:object:generate',
  'scaffold',
  'kubebuilder:webhook',
]);

/**
 * Loads the compiler, with what to do when the project lacks it. TypeScript is deliberately not a dependency (nor a
 * peer) of ctrlmetrics: it is found in the project's node_modules, where a TypeScript project has it as a dev
 * dependency, and so never reaches a production image.
 */
export async function loadTypeScript(): Promise<TypeScript> {
  try {
    const mod = (await import('typescript')) as TypeScript & { default?: TypeScript };
    const ts = mod.default ?? mod;
    const major = Number(ts.version.split('.')[0]);
    if (major < 5 || major > 6)
      throw new Error(
        `ctrlmetrics generate needs TypeScript 5 or 6 (its compiler API), found ${ts.version}: npm install --save-dev typescript@5`,
      );
    return ts;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND')
      throw new Error(
        'ctrlmetrics generate reads your TypeScript with its compiler API: npm install --save-dev typescript@5',
        { cause: err },
      );
    throw err;
  }
}

/** The `.ts` sources under the given files and directories (declarations and tests left out), sorted. */
export function sourceFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    if (!existsSync(p)) throw new Error(`${p}: no such file or directory`);
    if (statSync(p).isDirectory()) {
      for (const e of readdirSync(p).sort()) {
        if (e === 'node_modules' || e.startsWith('.')) continue;
        walk(join(p, e));
      }
    } else if (/\.(ts|mts)$/.test(p) && !/\.d\.(ts|mts)$/.test(p) && !/\.test\.(ts|mts)$/.test(p)) out.push(resolve(p));
  };
  for (const p of paths) walk(p);
  return [...new Set(out)].sort();
}

/**
 * Before the project's `npm install` (right after `create api`), `import … from 'ctrlmetrics'` has nothing to
 * resolve to: the types of the packages this CLI runs with stand in (declarations when built, sources under the
 * ctrlmetrics-source condition), each subpath as its package.json's exports map it.
 */
function ownPackageFallback(root: string): { paths?: Record<string, string[]> } {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', 'ctrlmetrics', 'package.json'))) return {};
    if (dirname(dir) === dir) break;
  }
  const typesOf = (specifier: string): string[] | undefined => {
    let file: string;
    try {
      file = fileURLToPath(import.meta.resolve(specifier));
    } catch {
      return undefined;
    }
    const types = file.endsWith('.ts') ? file : file.replace(/\.js$/, '.d.ts');
    return existsSync(types) ? [types] : undefined;
  };
  const runtime = typesOf('ctrlmetrics');
  if (!runtime) return {};
  const ext = runtime[0].endsWith('.d.ts') ? '.d.ts' : '.ts';
  const paths: Record<string, string[]> = {
    ctrlmetrics: runtime,
    'ctrlmetrics/*': [join(dirname(runtime[0]), `exports/*${ext}`)],
  };
  const envtest = typesOf('@ctrlmetrics/envtest');
  if (envtest) paths['@ctrlmetrics/envtest'] = envtest;
  return { paths };
}

/** What the comments say about one declaration. */
export interface Comments {
  /** The doc comment's text, processed as controller-gen processes Go docs; undefined without one. */
  doc?: string;
  markers: Marker[];
}

/** A program over API sources, with their comments read. */
/**
 * Parsed declaration files of installed packages and of TypeScript's lib (which do not change while a process
 * runs), by path: `create api` generates the CRDs, the role and the webhooks in turn, each a program over the same
 * sources, and parsing @types/node and the lib again is most of a program's cost. The project's own files are
 * always read fresh.
 */
const declarationCache = new Map<string, TS.SourceFile>();

function cachingHost(ts: TypeScript, options: TS.CompilerOptions): TS.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const cacheable =
      fileName.endsWith('.d.ts') && (fileName.includes('/node_modules/') || fileName.includes('/typescript/lib/'));
    if (!cacheable) return read(fileName, languageVersion, onError, shouldCreate);
    const key = `${typeof languageVersion === 'object' ? JSON.stringify(languageVersion) : String(languageVersion)}:${fileName}`;
    let sf = declarationCache.get(key);
    if (!sf) {
      sf = read(fileName, languageVersion, onError, shouldCreate);
      if (sf) declarationCache.set(key, sf);
    }
    return sf;
  };
  return host;
}

export class ApiSources {
  readonly program: TS.Program;
  readonly checker: TS.TypeChecker;
  private readonly claimed = new Map<string, Set<number>>();
  private readonly fileMarkers = new Map<string, Marker[]>();

  constructor(
    readonly ts: TypeScript,
    readonly files: string[],
    /** Shown in messages instead of absolute paths. */
    private readonly displayRoot: string,
  ) {
    const options: TS.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      ...ownPackageFallback(displayRoot),
    };
    this.program = ts.createProgram({
      rootNames: files,
      options,
      host: cachingHost(ts, options),
    });
    this.checker = this.program.getTypeChecker();
  }

  /**
   * Source files given (not their imports). A file that does not parse is refused with the compiler's first
   * syntax error, as tsc reports it: the types of a broken file would be read wrong.
   */
  sources(): TS.SourceFile[] {
    const out = this.files.map((f) => this.program.getSourceFile(f)).filter((s): s is TS.SourceFile => !!s);
    for (const sf of out) {
      const d = this.program.getSyntacticDiagnostics(sf)[0];
      if (d) {
        const message = this.ts.flattenDiagnosticMessageText(d.messageText, ' ');
        throw new MarkerError(
          { file: this.display(sf.fileName), line: this.lineOf(sf, d.start ?? 0) },
          `error TS${d.code}: ${message}`,
        );
      }
    }
    return out;
  }

  display(file: string): string {
    return file.startsWith(`${this.displayRoot}/`) ? file.slice(this.displayRoot.length + 1) : file;
  }

  /** The line (1-based) of a position. */
  lineOf(sf: TS.SourceFile, pos: number): number {
    return sf.getLineAndCharacterOfPosition(pos).line + 1;
  }

  /**
   * The comments of a declaration: its `/** *\/` doc and the `//` markers in the comment block right above it (one
   * blank line may separate blocks, as controller-gen allows). Claimed lines are not file-level.
   */
  commentsOf(node: TS.Node): Comments {
    const ts = this.ts;
    const sf = node.getSourceFile();
    const text = sf.text;
    const ranges = ts.getLeadingCommentRanges(text, node.pos) ?? [];
    const attached: TS.CommentRange[] = [];
    let next = node.getStart(sf);
    for (let i = ranges.length - 1; i >= 0; i--) {
      const r = ranges[i];
      const gap = text.slice(r.end, next);
      if ((gap.match(/\n/g) ?? []).length > 2) break;
      attached.unshift(r);
      next = r.pos;
    }
    const claimed = this.claimed.get(sf.fileName) ?? new Set<number>();
    this.claimed.set(sf.fileName, claimed);
    const markers: Marker[] = [];
    let doc: string | undefined;
    for (const r of attached) {
      const raw = text.slice(r.pos, r.end);
      if (r.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
        const body = raw.slice(2);
        if (!isMarkerLine(body)) continue;
        const line = this.lineOf(sf, r.pos);
        claimed.add(line);
        const m = parseMarker(body, { file: this.display(sf.fileName), line });
        if (!FILE_MARKERS.has(m.name)) markers.push(m);
      } else if (raw.startsWith('/**')) doc = processDoc(raw);
    }
    return { ...(doc !== undefined ? { doc } : {}), markers };
  }

  /** The file-level markers of a source (`+groupName`, `+versionName`, `+kubebuilder:rbac`, …), parsed once. */
  markersOfFile(sf: TS.SourceFile): Marker[] {
    const cached = this.fileMarkers.get(sf.fileName);
    if (cached) return cached;
    const out: Marker[] = [];
    const lines = sf.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const m = /^\s*\/\/(.*)$/.exec(lines[i]);
      if (!m || !isMarkerLine(m[1])) continue;
      const site = { file: this.display(sf.fileName), line: i + 1 };
      const marker = parseMarker(m[1], site);
      if (FILE_MARKERS.has(marker.name)) out.push(marker);
    }
    this.fileMarkers.set(sf.fileName, out);
    return out;
  }

  /**
   * Markers written where nothing reads them (not above a type or field, and not file-level): an error, since
   * they would otherwise do nothing.
   */
  strayMarkers(sf: TS.SourceFile): void {
    const claimed = this.claimed.get(sf.fileName) ?? new Set<number>();
    const lines = sf.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const m = /^\s*\/\/(.*)$/.exec(lines[i]);
      if (!m || !isMarkerLine(m[1]) || claimed.has(i + 1)) continue;
      const site = { file: this.display(sf.fileName), line: i + 1 };
      const marker = parseMarker(m[1], site);
      if (!FILE_MARKERS.has(marker.name))
        throw new MarkerError(
          site,
          `marker ${marker.text} is not above a type or field of an API kind, so nothing would read it`,
        );
    }
  }
}

/**
 * A doc comment as controller-gen turns a Go doc into a description: the `*` gutter removed, line breaks and blank
 * lines kept, marker lines and `TODO` lines dropped, nothing from a `---` line or a JSDoc `@tag` on.
 */
export function processDoc(raw: string): string | undefined {
  const lines = raw
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').replace(/\s+$/, ''));
  const out: string[] = [];
  let fenced = false;
  for (const l of lines) {
    const t = l.trim();
    if (/^(```|~~~)/.test(t)) fenced = !fenced;
    if (!fenced) {
      if (t.startsWith('---') || t.startsWith('@')) break;
      if (t.startsWith('+') || t.startsWith('TODO')) continue;
    }
    out.push(fenced ? l : t);
  }
  const text = out.join('\n').replace(/^\n+|\n+$/g, '');
  return text === '' ? undefined : text;
}

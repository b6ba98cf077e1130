/**
 * The state directory: CA, service-account signing key, admin token and the object store, written atomically
 * (temp file + rename) with owner-only permissions.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { StoreSnapshot } from './store.js';

const LOCK_FILE = 'authority.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Writes a file atomically with mode 0600; a failed write leaves no temporary file behind. */
export function writeFileAtomic(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already gone
    }
    throw err;
  }
}

/** Files of a state directory. */
export class StateDir {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private p(name: string): string {
    return join(this.dir, name);
  }

  read(name: string): string | undefined {
    const f = this.p(name);
    return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
  }

  write(name: string, data: string): void {
    writeFileAtomic(this.p(name), data);
  }

  /** Reads a value, or creates it with `make` and stores it. */
  async readOrCreate(name: string, make: () => string | Promise<string>): Promise<string> {
    const v = this.read(name);
    if (v !== undefined && v.length) return v;
    const nv = await make();
    this.write(name, nv);
    return nv;
  }

  /**
   * Takes the directory for this process (`authority.pid`), so that two authorities never write one state file.
   * A lock left by a process that is gone is taken over. Returns the release function.
   */
  lock(): () => void {
    const path = this.p(LOCK_FILE);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
        return () => {
          const owner = Number((this.read(LOCK_FILE) ?? '').trim());
          if (owner === process.pid) {
            try {
              unlinkSync(path);
            } catch {
              // already gone
            }
          }
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = Number((this.read(LOCK_FILE) ?? '').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new Error(
          `another authority (pid ${owner}) is using the state directory ${this.dir}: stop it, or use another --state-dir`,
        );
      }
      try {
        unlinkSync(path); // stale (its process is gone), or our own from an earlier start in this process
      } catch {
        // removed meanwhile
      }
    }
    throw new Error(`cannot lock the state directory ${this.dir}: remove ${path} if no authority is running`);
  }

  /**
   * The stored objects, or undefined when there is no state file yet. A state file that is empty, truncated or
   * not shaped as a snapshot stops the start with an error naming it; the file is left untouched.
   */
  loadSnapshot(): StoreSnapshot | undefined {
    const text = this.read('state.json');
    if (text === undefined) return undefined;
    try {
      if (text.length === 0) throw new Error('it is empty (0 bytes)');
      return checkSnapshot(JSON.parse(text) as unknown);
    } catch (err) {
      throw new Error(
        `the authority state file ${this.p('state.json')} is corrupt (${(err as Error).message}); it was left as it is: move it away to start fresh`,
        { cause: err },
      );
    }
  }

  saveSnapshot(s: StoreSnapshot): void {
    this.write('state.json', JSON.stringify(s));
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the shape a snapshot must have before any of it is loaded; throws saying what is wrong and where. */
function checkSnapshot(s: unknown): StoreSnapshot {
  if (!isPlainObject(s)) throw new Error('the top level is not an object');
  const rv = s['resourceVersion'];
  if (!(typeof rv === 'number' && Number.isSafeInteger(rv) && rv >= 0))
    throw new Error(`resourceVersion is ${JSON.stringify(rv)}, not a non-negative integer`);
  const objects = s['objects'];
  if (!isPlainObject(objects))
    throw new Error(
      `objects is ${Array.isArray(objects) ? 'an array' : JSON.stringify(objects)}, not an object of lists`,
    );
  for (const [key, list] of Object.entries(objects)) {
    if (!Array.isArray(list)) throw new Error(`objects.${key} is not a list`);
    list.forEach((o: unknown, i) => {
      const m = isPlainObject(o) ? o['metadata'] : undefined;
      if (!isPlainObject(m) || typeof m['name'] !== 'string' || m['name'] === '')
        throw new Error(`objects.${key}[${i}] has no metadata.name`);
      if (m['namespace'] !== undefined && typeof m['namespace'] !== 'string')
        throw new Error(`objects.${key}[${i}] has a metadata.namespace that is not a string`);
    });
  }
  return s as unknown as StoreSnapshot;
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The state directory: CA, service-account signing key, admin token and the object store, written atomically
 * (temp file + rename) with owner-only permissions.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { StoreSnapshot } from './store.js';

/** Writes a file atomically with mode 0600. */
export function writeFileAtomic(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  renameSync(tmp, path);
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

  loadSnapshot(): StoreSnapshot | undefined {
    const text = this.read('state.json');
    if (!text) return undefined;
    try {
      const s = JSON.parse(text) as StoreSnapshot;
      if (typeof s.resourceVersion !== 'number' || typeof s.objects !== 'object') throw new Error('missing resourceVersion or objects');
      return s;
    } catch (err) {
      throw new Error(`the authority state file ${this.p('state.json')} is corrupt (${(err as Error).message}); move it away to start fresh`);
    }
  }

  saveSnapshot(s: StoreSnapshot): void {
    this.write('state.json', JSON.stringify(s));
  }
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

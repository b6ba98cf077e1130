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
        throw new Error(`another authority (pid ${owner}) is using the state directory ${this.dir}: stop it, or use another --state-dir`);
      }
      try {
        unlinkSync(path); // stale (its process is gone), or our own from an earlier start in this process
      } catch {
        // removed meanwhile
      }
    }
    throw new Error(`cannot lock the state directory ${this.dir}: remove ${path} if no authority is running`);
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

/**
 * One demo per state directory: a pid file taken with an exclusive create. A second `ctrlmetrics demo` on the
 * same directory would otherwise rewrite the kubeconfig and tokens of the running one.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const LOCK_FILE = 'demo.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of another live demo holding `stateDir`'s lock, if any (a lock left by a dead process is none). */
export async function lockHolder(stateDir: string): Promise<number | undefined> {
  const owner = Number((await readFile(join(stateDir, LOCK_FILE), 'utf8').catch(() => '')).trim());
  return Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner) ? owner : undefined;
}

/** What to do when another demo holds the directory. */
export function lockedMessage(stateDir: string, pid: number): string {
  return `another ctrlmetrics demo (pid ${pid}) is using the state directory ${stateDir}: stop it, or pass --state-dir DIR`;
}

/**
 * Takes the lock of `stateDir` (which must exist); returns the release function. Throws a message saying what to
 * do when another live process holds it; a lock left by a dead process is taken over.
 */
export async function lockStateDir(stateDir: string): Promise<() => Promise<void>> {
  const path = join(stateDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return async () => {
        const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
        if (owner === process.pid) await unlink(path).catch(() => undefined);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      throw new Error(lockedMessage(stateDir, owner));
    }
    await unlink(path).catch(() => undefined); // stale: its process is gone
  }
  throw new Error(`cannot lock the state directory ${stateDir}: remove ${path} if no demo is running`);
}

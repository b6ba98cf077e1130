/**
 * The TypeScript the scaffolder writes, formatted with the project's Prettier options, so `npm run lint` (which
 * checks the format) passes on whatever `init`, `create api` and `create webhook` wrote — the templates alone cannot
 * promise that, since kind names and flags change the line lengths. A project without a Prettier config (made before
 * `init` wrote one, or whose user removed it) gets the files as the templates render them. Prettier is loaded on the
 * first use only.
 */
import { join } from 'node:path';
import type { Options } from 'prettier';

/** Formats every `.ts` entry of `files` (path → text) in place with `options`; nothing when `options` is null. */
export async function formatTypeScript(
  files: Map<string, string> | Record<string, string>,
  options: Options | null,
): Promise<void> {
  if (!options) return;
  const { format } = await import('prettier');
  const entries = files instanceof Map ? [...files] : Object.entries(files);
  for (const [path, text] of entries) {
    if (!path.endsWith('.ts')) continue;
    const formatted = await format(text, { ...options, filepath: path, parser: 'typescript' });
    if (files instanceof Map) files.set(path, formatted);
    else files[path] = formatted;
  }
}

/** The Prettier options of the project in `dir` (its .prettierrc and the like), or null without any. */
export async function projectPrettierOptions(dir: string): Promise<Options | null> {
  const { resolveConfig } = await import('prettier');
  return resolveConfig(join(dir, 'src', 'main.ts'), { editorconfig: false });
}

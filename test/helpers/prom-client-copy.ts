/**
 * An application directory whose `node_modules` holds a second copy of prom-client (copied, not linked: Node would
 * resolve a link to ctrlmetrics' own copy), its dependencies linked, and a copy of `@prometheus-io/client` that
 * throws when loaded.
 */
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';

/** Fills `app` (an existing directory); returns the directory of its prom-client copy. */
export function makeAppWithPromClientCopies(app: string): string {
  const copyDir = join(app, 'node_modules', 'prom-client');
  cpSync(join(ROOT, 'node_modules', 'prom-client'), copyDir, { recursive: true });
  mkdirSync(join(app, 'node_modules', '@opentelemetry'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', '@opentelemetry', 'api'), join(app, 'node_modules', '@opentelemetry', 'api'));
  symlinkSync(join(ROOT, 'node_modules', 'tdigest'), join(app, 'node_modules', 'tdigest'));
  const broken = join(app, 'node_modules', '@prometheus-io', 'client');
  mkdirSync(broken, { recursive: true });
  writeFileSync(
    join(broken, 'package.json'),
    JSON.stringify({ name: '@prometheus-io/client', version: '0.16.1', main: 'index.js' }),
  );
  writeFileSync(join(broken, 'index.js'), "throw new Error('this build needs Node.js 22');\n");
  return copyDir;
}

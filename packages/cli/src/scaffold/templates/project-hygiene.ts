/**
 * What keeps a new project tidy, as kubebuilder scaffolds it: the lint setup (ESLint with typescript-eslint's
 * recommended rules, Prettier for the format; `npm run lint`, `npm run lint-fix`) and GitHub Actions workflows that
 * lint, test on the embedded authority, and run the tests on a kind cluster (`USE_EXISTING_CLUSTER=true`).
 */
import { TEST_OUT_DIR } from './project-test.js';

/** The Prettier options of a generated project; the scaffolder formats the TypeScript it writes with them. */
export const PRETTIER_OPTIONS = { printWidth: 120, singleQuote: true } as const;

/** The folders neither ESLint nor Prettier reads: builds, installs, the vendored packages. */
const GENERATED = ['dist/', `${TEST_OUT_DIR}/`, 'node_modules/', 'vendor/'];

export function hygieneFiles(): Record<string, string> {
  const workflow = (name: string, job: string, steps: string): string => `name: ${name}

on:
  push:
  pull_request:

jobs:
  ${job}:
    name: Run on Ubuntu
    runs-on: ubuntu-latest
    steps:
      - name: Clone the code
        uses: actions/checkout@v4

      - name: Setup Node.js
        uses: actions/setup-node@v4
        with:
          node-version: 24
          cache: npm

      - name: Install the dependencies
        run: npm ci
${steps}`;
  return {
    'eslint.config.js': `// ESLint (npm run lint): typescript-eslint's recommended rules over the sources and the tests; Prettier
// (.prettierrc.json) checks the format. npm run lint-fix applies what both can fix.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: [${GENERATED.map((g) => `'${g}'`).join(', ')}] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
`,
    '.prettierrc.json': JSON.stringify(PRETTIER_OPTIONS, null, 2) + '\n',
    // the code only: the manifests under config/ are what kustomize and the generators write
    '.prettierignore': ['*', '!*/', '!**/*.ts', '!**/*.js', '!**/*.mjs', ...GENERATED, ''].join('\n'),
    '.github/workflows/lint.yml': workflow(
      'Lint',
      'lint',
      `
      - name: Run the linter
        run: npm run lint
`,
    ),
    '.github/workflows/test.yml': workflow(
      'Tests',
      'test',
      `
      - name: Run the tests (on the embedded API server)
        run: npm test
`,
    ),
    '.github/workflows/test-e2e.yml': workflow(
      'E2E Tests',
      'test-e2e',
      `
      - name: Install the latest version of kind
        run: |
          curl -Lo ./kind https://kind.sigs.k8s.io/dl/latest/kind-linux-amd64
          chmod +x ./kind
          sudo mv ./kind /usr/local/bin/kind

      - name: Create a kind cluster
        run: kind create cluster

      - name: Run the tests on the cluster
        env:
          USE_EXISTING_CLUSTER: 'true'
        run: npm test
`,
    ),
  };
}

// ESLint: typescript-eslint's type-checked rules over the library, the CLI, the examples, the tests and the
// benchmarks (each file checked with the TypeScript program that compiles it); `npm run lint` runs it with
// Prettier's check (.prettierrc.json), and CI runs `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'packages/*/dist/',
      'docs/api/',
      'node_modules/',
      '**/.scratch-*',
      'test/**/fixtures/**',
      'bench/servers/**/*.go',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.check-tests.json', './bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    rules: {
      // an async function without await is how this code meets a Promise-returning interface (a runnable's start, a
      // filter's review, a test double) and turns a throw into a rejection; rewriting each into Promise.resolve()
      // would say less
      '@typescript-eslint/require-await': 'off',
      // a destructuring whose names are reassigned in part stays one `let`
      'prefer-const': ['error', { destructuring: 'all' }],
      // a leading underscore names what is left unused on purpose: a destructured field dropped from a copy, a
      // callback's parameter kept for its position
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // the authority and the generator read JSON and TypeScript marker values typed `unknown` and stringify their
    // scalars into names and messages by design (a non-scalar there is refused before or named in the message)
    files: ['packages/envtest/src/**/*.ts', 'packages/cli/src/generate/**/*.ts'],
    rules: { '@typescript-eslint/no-base-to-string': 'off' },
  },
  {
    // tests and benchmarks read JSON answers and poke at them, throw and reject odd values on purpose and print
    // whatever they got in a failure's message; node:test's test() and describe() return promises the runner awaits
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
    },
  },
  {
    // plain JavaScript (scripts, this file): no type information
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);

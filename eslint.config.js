// Type-checked lint rules for the whole project; the build output is ignored.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Flat config replaces (not merges) a rule's options per block, so every block that restricts imports repeats this.
const functionsClassImports = {
  name: '@azure/functions',
  importNames: ['HttpRequest', 'HttpResponse', 'InvocationContext'],
  allowTypeImports: true,
  message:
    "Node's ESM loader sees these classes only on the default export: import azureFunctions from '@azure/functions'.",
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.local-data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  // Plain JavaScript (this file) is linted without type information.
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { project: null } },
  },
  { rules: { 'no-restricted-imports': ['error', { paths: [functionsClassImports] }] } },
  // Layering (DESIGN §3): triggers only translate; the product never depends on a host.
  {
    files: ['functions/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            functionsClassImports,
            ...['@azure/cosmos', '@azure/service-bus', '@azure/web-pubsub', '@azure/identity', 'openai'].map(
              (name) => ({
                name,
                message: 'functions/ calls use-cases in shared/; SDK clients live in adapters.',
              }),
            ),
          ],
          patterns: [{ group: ['**/local/**'], message: 'functions/ must not depend on the local runtime.' }],
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [functionsClassImports],
          patterns: [
            {
              group: ['**/local/**', '**/functions/**'],
              message: 'shared/ must not depend on a host or trigger.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['local/start.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);

// Type-checked lint rules for the whole project; the build output is ignored.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Layering (which folder may import what) is checked on the whole import graph by scripts/check-layering.ts.
const functionsClassImports = {
  name: '@azure/functions',
  importNames: ['HttpRequest', 'HttpResponse', 'InvocationContext'],
  allowTypeImports: true,
  message:
    "Node's ESM loader sees these classes only on the default export: import azureFunctions from '@azure/functions'.",
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.local-data/**', 'coverage/**', '.deploy/**'] },
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
  // The web client is type-checked against its own tsconfig (DOM, JSX) and follows the rules of hooks.
  {
    files: ['web/src/**/*.ts', 'web/src/**/*.tsx'],
    languageOptions: {
      parserOptions: { project: './web/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  // Plain JavaScript (this file) is linted without type information.
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { project: null } },
  },
  { rules: { 'no-restricted-imports': ['error', { paths: [functionsClassImports] }] } },
  {
    files: ['local/start.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'scripts/start.js'],
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

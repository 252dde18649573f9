// Lint: typescript-eslint's recommended rules plus the lanes that keep each runtime's imports
// where they belong (the engine never imports electron; shared/ does no I/O; the renderer reaches
// the engine only through the Bridge) and the clock rule (engine time comes from the Clock port).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

const electronOnly = {
  name: 'electron',
  message: 'Only src/main/index.ts, src/main/desktop/ and src/preload/ may import electron.',
};

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-object-type': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-useless-assignment': 'off',
    },
  },
  {
    files: ['src/main/engine/**/*.ts', 'src/main/serve.ts', 'src/main/paths.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ ...electronOnly, allowTypeImports: false }], patterns: [{ group: ['electron/*'], message: electronOnly.message }] },
      ],
    },
  },
  {
    files: ['src/main/engine/**/*.ts'],
    ignores: ['src/main/engine/clock.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='Date'][property.name='now']", message: 'Use the injected Clock (clock.now()).' },
        { selector: "CallExpression[callee.name='setTimeout']", message: 'Use the injected Clock (clock.setTimer()).' },
        { selector: "CallExpression[callee.name='setInterval']", message: 'Use the injected Clock (clock.setTimer()).' },
      ],
    },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnly],
          patterns: [{ group: ['node:*', 'fs', 'path', 'http', 'os', 'crypto'], message: 'src/shared is plain data: no I/O.' }],
        },
      ],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnly],
          patterns: [
            { group: ['node:*'], message: 'The renderer runs in a browser: no Node modules.' },
            { group: ['**/main/**'], message: 'The renderer talks to the engine only through the Bridge.' },
          ],
        },
      ],
    },
  },
);

// Lint rules the type checker does not enforce: promises that are neither awaited nor handled
// (a lost rejection kills nothing but hides a fault), promises passed where a callback's result is
// ignored, type-only imports written as such (no runtime import cycles through types), and one
// statement per line.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-output/**', 'coverage/**'] },
  // Directives for rules of other configurations (no-control-regex, only-throw-error) stay where they are.
  { linterOptions: { reportUnusedDisableDirectives: 'off' } },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Values from outside (znodes, files, requests) are `unknown` and checked, never `any`.
      '@typescript-eslint/no-explicit-any': 'error',
      // One statement per line: a line that holds two is read as one.
      'max-statements-per-line': ['error', { max: 1 }],
    },
  },
);

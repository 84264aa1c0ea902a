// Lints the TypeScript and the JavaScript scripts: typescript-eslint's type-aware rules where the
// compiler's types reach (src/, test/, the vitest configs), the plain recommended rules for the
// .mjs/.cjs scripts. Tests read JSON and child-process output all day: the no-unsafe-* rules, which
// flag every use of a parsed value, apply to the library only.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'prebuilds/', 'node_modules/', '.lab/', 'native/build-*/', 'coverage/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['test/**/*.ts', '**/*.mts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // Control characters are what these escape, and what their tests feed them.
    files: ['src/output/control-text.ts', 'test/**/*.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
);

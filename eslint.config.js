// ESLint: typescript-eslint's type-aware recommended rules on src/, the plain ones on tests and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The bench scripts are linted without types (below), but still parsed by the default project.
        projectService: {
          allowDefaultProject: ['*.js', 'bench/*.mjs', 'scripts/*.mjs', 'test/helpers/*.mjs', 'vitest.config.ts'],
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 40, // 19 bench scripts, the scripts, the configs: room to grow
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Unused names are bugs, except a deliberately ignored one.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `void promise` marks a deliberate fire-and-forget; everything else must be awaited or handled.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      eqeqeq: ['error', 'always'],
      // Prettier wraps code at 160; messages stay whole on one line, so that they can be found by grep.
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
      'no-console': 'error',
    },
  },
  {
    files: ['bench/**/*.mjs', 'scripts/**/*.mjs', 'test/helpers/*.mjs', '*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests reach into parsed JSON and fakes; the strictness that matters there is the assertions'.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
);

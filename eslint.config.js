// ESLint flat config: `npm run lint` (eslint .), part of `make test`.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    // Build output, installed packages, the modules `make build` embeds as
    // base64, and test artefacts are not source.
    ignores: ['build/', 'node_modules/', 'src/loader/*.generated.js', 'tests/artifacts/'],
  },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // Every parameter before the last one used stays: callbacks such as
      // (td, item, i) => … name their arguments by position.
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-var': 'error',
      'prefer-const': 'error',
      // `x != null` is the idiom for "null or undefined"; everything else is strict.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The package runs in browsers, workers and Node alike. (src/integrations/
    // and src/abi/ hold build-time tools for Node that the package does not ship.)
    files: ['src/**/*.js'],
    ignores: ['src/integrations/**', 'src/abi/**'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      // After load the package reads nothing a page can replace
      // (src/loader/intrinsics.js): these call Array.prototype[Symbol.iterator].
      'no-restricted-syntax': ['error',
        { selector: 'ForOfStatement', message: 'for-of calls a replaceable iterator: index the array' },
        { selector: 'ArrayPattern', message: 'array destructuring calls a replaceable iterator' },
        { selector: 'ArrayExpression > SpreadElement, CallExpression > SpreadElement, NewExpression > SpreadElement',
          message: 'spread calls a replaceable iterator' },
        // A page can define an index on Array.prototype or Object.prototype:
        // appending to a plain array runs its setter, reading a hole its getter.
        { selector: 'ArrayExpression[elements.length=0]', message: 'build arrays as new List() (src/loader/intrinsics.js)' },
      ],
    },
  },
  {
    files: ['tests/**/*.{js,mjs}', 'web/serve.js', 'eslint.config.js', 'src/integrations/**/*.js', 'src/abi/**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['tests/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
  },
  {
    // The consumer pages and the worker run in the browser.
    files: ['tests/consumer/page.mjs', 'tests/consumer/gpu-page.mjs', 'tests/consumer/worker.mjs', 'tests/bench/page.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // The Node consumer imports package.json as users do, with an import attribute (ES2025).
    files: ['tests/consumer/esm.mjs'],
    languageOptions: { ecmaVersion: 2025 },
  },
  {
    // Node tests that drive a page: the callbacks they hand to
    // page.evaluate() and page.waitForFunction() run in the browser.
    // (Float16Array: the three browsers have it, Node 20 does not.)
    files: ['tests/demo.test.js', 'tests/engines.test.js', 'tests/tarball.test.js', 'tests/model-page.test.js'],
    languageOptions: { globals: { ...globals.browser, ...globals.node, Float16Array: 'readonly' } },
  },
  {
    // The tutorial's modules run in the page.
    files: ['web/**/*.js'],
    ignores: ['web/serve.js'],
    languageOptions: { globals: globals.browser },
  },
];

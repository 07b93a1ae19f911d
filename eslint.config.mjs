// eslint flat config for the front-end files shipped inside the package (no build step: the browser
// loads them as they are). scripts/test.sh installs eslint into .venv/npm and runs it on these files.
// The rules are eslint's "recommended" set written out (so this file imports nothing and works wherever
// eslint itself is installed), plus a few that catch stale-state and scoping mistakes.

const recommended = {
  "constructor-super": "error", "for-direction": "error", "getter-return": "error", "no-async-promise-executor": "error",
  "no-case-declarations": "error", "no-class-assign": "error", "no-compare-neg-zero": "error", "no-cond-assign": "error",
  "no-const-assign": "error", "no-constant-binary-expression": "error", "no-constant-condition": "error",
  "no-control-regex": "error", "no-debugger": "error", "no-delete-var": "error", "no-dupe-args": "error",
  "no-dupe-class-members": "error", "no-dupe-else-if": "error", "no-dupe-keys": "error", "no-duplicate-case": "error",
  "no-empty": "error", "no-empty-character-class": "error", "no-empty-pattern": "error", "no-empty-static-block": "error",
  "no-ex-assign": "error", "no-extra-boolean-cast": "error", "no-fallthrough": "error", "no-func-assign": "error",
  "no-global-assign": "error", "no-import-assign": "error", "no-invalid-regexp": "error", "no-irregular-whitespace": "error",
  "no-loss-of-precision": "error", "no-misleading-character-class": "error", "no-new-native-nonconstructor": "error",
  "no-nonoctal-decimal-escape": "error", "no-obj-calls": "error", "no-octal": "error", "no-prototype-builtins": "error",
  "no-redeclare": "error", "no-regex-spaces": "error", "no-self-assign": "error", "no-setter-return": "error",
  "no-shadow-restricted-names": "error", "no-sparse-arrays": "error", "no-this-before-super": "error",
  "no-undef": "error", "no-unexpected-multiline": "error", "no-unreachable": "error", "no-unsafe-finally": "error",
  "no-unsafe-negation": "error", "no-unsafe-optional-chaining": "error", "no-unused-labels": "error",
  "no-unused-private-class-members": "error", "no-unused-vars": "error", "no-useless-backreference": "error",
  "no-useless-catch": "error", "no-useless-escape": "error", "no-with": "error", "require-yield": "error",
  "use-isnan": "error", "valid-typeof": "error",
};

const browser = Object.fromEntries([
  "window", "document", "console", "navigator", "performance", "requestAnimationFrame", "cancelAnimationFrame",
  "setTimeout", "clearTimeout", "setInterval", "clearInterval", "Blob", "Response", "DecompressionStream",
  "ResizeObserver", "MutationObserver", "CSS", "getComputedStyle", "Node", "HTMLElement", "SVGElement", "Event",
  "KeyboardEvent", "URL", "TextDecoder", "TextEncoder", "DOMParser", "XMLSerializer", "Intl",
].map((name) => [name, "readonly"]));

export default [
  {
    // the sweep's HTML report script: a classic script inlined into a static page
    files: ["gebench/sweep/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: browser },
    rules: recommended,
  },
  {
    // the workbench's anywidget ES module
    files: ["gebench/viz/static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: browser },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      ...recommended,
      "no-var": "error", "prefer-const": "error", "eqeqeq": ["error", "always", { null: "ignore" }],
      "no-shadow": "error", "no-implicit-globals": "error",
    },
  },
];

declare module 'node-gyp-build' {
  /** Loads the addon from `dir`'s prebuilds/ or build/ directory. */
  function load(dir: string): unknown;
  export = load;
}

// Bundle the Worker (src/worker.ts) into dist/worker.js, as `wrangler deploy` would: one ES module, the
// MCP SDK's web-standard (workerd) build, no Node built-ins. The mrtr-state dependency is a link to the
// package in this repository, which has its own copy of the SDK (a dev dependency); the plugin resolves the
// SDK from this directory wherever it is imported, so the bundle holds one copy, as an npm install would.
import { build } from "esbuild";

const HERE = import.meta.dirname;

/** Resolve `@modelcontextprotocol/*` imports from this directory, whoever imports them. */
const oneSdk = {
  name: "one-sdk",
  setup(context) {
    context.onResolve({ filter: /^@modelcontextprotocol\// }, (args) => {
      if (args.pluginData === "one-sdk" || args.resolveDir === HERE) return undefined;
      return context.resolve(args.path, { kind: args.kind, resolveDir: HERE, pluginData: "one-sdk" });
    });
  },
};

await build({
  entryPoints: [`${HERE}/src/worker.ts`],
  outfile: `${HERE}/dist/worker.js`,
  bundle: true,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  conditions: ["workerd", "worker", "browser", "import", "default"],
  plugins: [oneSdk],
  target: "es2022",
  logLevel: "warning",
});

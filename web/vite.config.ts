import { defineConfig } from 'vite';
import { gqlDocumentsPlugin } from './gql-documents';
import { precompressPlugin } from './precompress';

// The reviewer console. `npm run dev` serves it with /graphql (HTTP and WebSocket) proxied to
// the API on TASKBAY_API (default http://127.0.0.1:4000); `npm run build` writes web/dist,
// which the server serves at /. JSX is compiled by Vite's own transformer (automatic runtime),
// so no React plugin is needed (fast refresh is the only thing given up).
const api = process.env.TASKBAY_API ?? 'http://127.0.0.1:4000';

export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic' } },
  // Each module's graphql() documents resolved at build time (so they load with that module),
  // and, after writing web/dist, .br and .gz siblings of every asset (served by Accept-Encoding).
  plugins: [gqlDocumentsPlugin(), precompressPlugin()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 800,
    // .vite/manifest.json: each chunk's static and dynamic imports, from which the bench counts
    // what the first page load downloads (server/scripts/console-bytes.ts). Not served.
    manifest: true,
    rolldownOptions: {
      // The precompress step takes most of the build on purpose (brotli at its highest level).
      checks: { bundlerTimings: false },
      // The libraries in a chunk of their own (the first load needs every one of them): a
      // release that changes only the console's code leaves it cached, and it compresses a
      // little better than libraries mixed with the app. Pages other than sign-in, the inbox
      // and an approval are chunks of their own too (React.lazy in src/App.tsx).
      output: { codeSplitting: { groups: [{ name: 'vendor', test: /node_modules/ }] } },
    },
  },
  server: {
    proxy: { '/graphql': { target: api, ws: true, changeOrigin: false } },
  },
});

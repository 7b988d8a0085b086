import { defineConfig } from 'vite';
import { precompressPlugin } from './precompress';

// The reviewer console. `npm run dev` serves it with /graphql (HTTP and WebSocket) proxied to
// the API on TASKBAY_API (default http://127.0.0.1:4000); `npm run build` writes web/dist,
// which the server serves at /. JSX is compiled by Vite's own transformer (automatic runtime),
// so no React plugin is needed (fast refresh is the only thing given up).
const api = process.env.TASKBAY_API ?? 'http://127.0.0.1:4000';

export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic' } },
  // After writing web/dist: .br and .gz siblings of every asset (served by Accept-Encoding).
  plugins: [precompressPlugin()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 800,
    // The precompress step takes most of the build on purpose (brotli at its highest level).
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: {
    proxy: { '/graphql': { target: api, ws: true, changeOrigin: false } },
  },
});

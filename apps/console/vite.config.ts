import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console's build (`npm run build` in apps/console, part of turbo build) writes dist/, which the embedded
 * platform serves at `/` and the distributed edge (infra/nginx) serves beside the API. `npm run dev` serves
 * the sources with hot reload and proxies the API to a running platform (RIGMARKET_URL, default
 * http://127.0.0.1:8080).
 */
const api = process.env.RIGMARKET_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: {
    port: 5173,
    proxy: { '/api': { target: api, changeOrigin: true }, '/logs': { target: api, changeOrigin: true } },
  },
});

// Builds the web client from web/ into dist/web/ with relative asset paths, so any host can serve it under any
// path; the dev server proxies /api to the local runtime (VITE_API_TARGET, default http://localhost:7071).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const apiTarget = process.env['VITE_API_TARGET'] ?? 'http://localhost:7071';

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // The chat view's Markdown renderer brings syntax highlighting; one large chunk is fine for this page.
    chunkSizeWarningLimit: 4000,
  },
  server: { proxy: { '/api': { target: apiTarget, changeOrigin: false, ws: true } } },
});

// Builds the web client from web/ into dist/web/ with relative asset paths, so any host can serve it under any
// path; the dev server proxies /api to the local runtime (VITE_API_TARGET, default http://localhost:7071).
import { fileURLToPath } from 'node:url';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const apiTarget = process.env['VITE_API_TARGET'] ?? 'http://localhost:7071';

export default defineConfig({
  root,
  base: './',
  plugins: [react(), tailwindcss()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Served beside the scripts, so an error's stack in the browser's tools reads as the source.
    sourcemap: true,
    // The Markdown renderer and its code highlighting are chunks of their own, loaded with the first answer.
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { '/api': { target: apiTarget, changeOrigin: false, ws: true } } },
});

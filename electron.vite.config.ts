import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

const root = dirname(fileURLToPath(import.meta.url));

// One build for both shells: out/main/index.js (desktop), out/main/serve.js (headless),
// out/main/logWorker.js (the request log's worker thread, engine/logs/logWorker.ts),
// out/preload/index.cjs (sandboxed preload: everything bundled but electron), out/renderer (dashboard).
export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      externalizeDeps: { exclude: ['zod'] },
      rollupOptions: {
        input: {
          index: resolve(root, 'src/main/index.ts'),
          serve: resolve(root, 'src/main/serve.ts'),
          logWorker: resolve(root, 'src/main/engine/logs/logWorker.ts'),
        },
        output: { charset: 'ascii', comments: false },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(root, 'src/preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'src/renderer'),
    plugins: [react()],
    build: {
      outDir: 'out/renderer',
      minify: true,
      rollupOptions: { input: { index: resolve(root, 'src/renderer/index.html') } },
    },
  },
});

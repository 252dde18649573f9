// Runs the request-log worker from its TypeScript source (tests and `tsx` runs, where no build
// exists): registers tsx in this thread, then loads the entry logWriter.ts names. The desktop app
// and `npm run serve` load the built out/main/logWorker.js instead.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);

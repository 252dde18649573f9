// How the engine's heaps grow under a burst (issue 25), measured with bench/lean.ts's load and
// applied at run time (the young generation of the engine's own thread is the one setting that can
// only come from the command line: scripts/runtimeTuning.mjs):
// - the old generation's growing factor: V8 lets the old generation grow to up to 4x what survived
//   the last full collection before it collects again; under a burst that is mostly promoted
//   garbage of finished requests. 1.5x halved the peak's old generation; 1.3x took idle and the
//   resident set after a burst 5-10 MiB lower again. Neither costs measurable throughput (the
//   collections are concurrent and the live set is small).
// - the log worker's young generation: its batches are parsed and written at once, so a small young
//   generation keeps the worker's heap near its live set. V8 sizes an isolate's young generation
//   from the `--max-semi-space-size` flag when one is set (over the Worker's resourceLimits) and
//   reads it only when the isolate is created, so the flag is set to the worker's size just before
//   the worker starts: the engine's own heap, created long before, keeps its size.
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + this / 100) x its live size before the next full collection. */
export const HEAP_GROWING_PERCENT = 30;
/** The log worker's semi-space: its young generation is twice this (V8's default grows to 2 x 16 MiB). */
export const LOG_WORKER_SEMI_SPACE_MB = 1;

let tuned = false;

/** Applies the growing factor to this process's isolates, once; false if the runtime refused. */
export function tuneHeap(): boolean {
  if (tuned) return true;
  try {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    setFlagsFromString(`--gc-memory-reducer-start-delay-ms=2000`);
    tuned = true;
  } catch {
    tuned = false;
  }
  return tuned;
}

/** Call right before starting the log worker: isolates created from now on get its young generation. */
export function workerHeap(): { maxYoungGenerationSizeMb: number } {
  try {
    setFlagsFromString(`--max-semi-space-size=${LOG_WORKER_SEMI_SPACE_MB}`);
  } catch {
    // the resource limit below still applies where no flag overrides it
  }
  return { maxYoungGenerationSizeMb: 2 * LOG_WORKER_SEMI_SPACE_MB };
}

// How the engine's process is started, in one place: `npm run serve` (scripts/serve.mjs),
// `npm start` (scripts/start.mjs, for Electron's main process) and the benchmarks
// (bench/lib.ts) all start it with these, so what is measured is what users run.
// Measured with `npm run bench:lean` (issue 25; docs/decisions/lean-25-memory.md):
// - `--max-semi-space-size=8`: V8's young generation grows to 2 x 8 MiB under load instead of
//   2 x 16 MiB; no measurable cost per request (4 MiB cost about 6 %).
// - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own arena (up to 8 per core)
//   and keeps what a burst freed in them; two arenas hold the resident set after a burst about
//   10-20 MiB lower, at no measurable cost. Read by glibc at process start, so it must be in the
//   environment the process starts with (a value the user set is kept).

/** V8 flags for the engine's process (Node's command line; Electron's `--js-flags`). */
export const ENGINE_V8_FLAGS = ['--max-semi-space-size=8'];

/** Environment for the engine's process (the user's own values win). */
export function engineEnv(env = process.env) {
  return { MALLOC_ARENA_MAX: '2', ...env };
}

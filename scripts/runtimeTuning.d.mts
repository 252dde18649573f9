// Types of runtimeTuning.mjs (a plain ESM script the launchers run without a build step).
export declare const ENGINE_V8_FLAGS: string[];
export declare function engineEnv(env?: Record<string, string | undefined>): Record<string, string>;

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts', 'tests/unit/**/*.test.tsx'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // Chaos, heap and soak suites (R-RT-01..05): bounded versions run with everything else;
        // the long versions need their flag (see ARCHITECTURE.md, "Resilience suites"). Forks
        // with --expose-gc so the heap suite can force a collection.
        test: {
          name: 'resilience-suites',
          include: ['tests/chaos/**/*.test.ts', 'tests/heap/**/*.test.ts', 'tests/soak/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          execArgv: ['--expose-gc'],
          testTimeout: 60_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The agent conformance suite: the real agent CLIs (pinned devDependencies) in a sandbox
        // HOME against the engine and a scripted upstream (see ARCHITECTURE.md, "Resilience
        // suites"). One agent file at a time: each run is a heavy child process.
        test: {
          name: 'agents',
          include: ['tests/agents/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});

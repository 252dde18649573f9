// Runs one resilience suite (chaos, heap or soak) in the resilience-suites vitest project.
// `--long` selects the suite's long version by setting its flag (RUN_CHAOS_INT, RUN_HEAP_INT,
// RUN_SOAK_INT); any other argument goes to vitest (a path under the suite's folder runs only
// that file). Used by `npm run test:chaos|heap|soak`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FLAGS = { chaos: 'RUN_CHAOS_INT', heap: 'RUN_HEAP_INT', soak: 'RUN_SOAK_INT' };
const [suite, ...rest] = process.argv.slice(2);
if (!(suite in FLAGS)) {
  console.error(`usage: node tests/support/runSuite.mjs <${Object.keys(FLAGS).join('|')}> [--long] [vitest args]`);
  process.exit(2);
}
const long = rest.includes('--long');
const env = { ...process.env };
if (long) env[FLAGS[suite]] = '1';
const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const extra = rest.filter((a) => a !== '--long');
// A file or folder of the suite given as an argument narrows the run to it (vitest ORs filters).
const narrowed = extra.some((a) => a.startsWith(`tests/${suite}/`));
const args = [vitest, 'run', '--project', 'resilience-suites', ...(narrowed ? [] : [`tests/${suite}/`]), ...extra];
const child = spawn(process.execPath, args, { stdio: 'inherit', env });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

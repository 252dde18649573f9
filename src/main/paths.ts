// Data directory resolution shared by both shells (node only).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** --data-dir, else SWITCHYARD_DATA_DIR, else ~/.switchyard. */
export function resolveDataDir(flag: string | undefined, env: Record<string, string | undefined>): string {
  if (flag) return resolve(flag);
  if (env.SWITCHYARD_DATA_DIR) return resolve(env.SWITCHYARD_DATA_DIR);
  return join(homedir(), '.switchyard');
}

// Import from Claude Code: reads its credentials file (`~/.claude/.credentials.json` on Linux and
// Windows; `$CLAUDE_CONFIG_DIR/.credentials.json` when that is set). On macOS Claude Code keeps the
// credentials in the Keychain instead, so there the file is usually absent and the user pastes.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ClaudeAuthError } from './claudeAuthError';
import { parseCredentialsFile, type ClaudeTokenBundle } from './tokenBundle';

const MAX_FILE_BYTES = 1024 * 1024;

export function claudeCodeCredentialsPath(env: Record<string, string | undefined> = process.env, home: string = homedir()): string {
  const dir = env.CLAUDE_CONFIG_DIR?.trim() || join(home, '.claude');
  return join(dir, '.credentials.json');
}

/** Reads and parses the file; every failure is a ClaudeAuthError naming what is wrong. */
export async function readClaudeCodeCredentials(path: string, now: number): Promise<ClaudeTokenBundle> {
  let text: string;
  try {
    const buf = await readFile(path);
    if (buf.length > MAX_FILE_BYTES) throw new ClaudeAuthError('credentials_bad_json', 'the credentials file is too large to be Claude Code\'s', 'path');
    text = buf.toString('utf8');
  } catch (err) {
    if (err instanceof ClaudeAuthError) throw err;
    const code = (err as { code?: string }).code;
    throw new ClaudeAuthError(
      'credentials_not_found',
      code === 'ENOENT'
        ? `no Claude Code credentials at ${path} (sign in to Claude Code first, or paste the tokens)`
        : `the Claude Code credentials at ${path} could not be read${code ? ` (${code})` : ''}`,
      'path',
    );
  }
  return parseCredentialsFile(text, now);
}

// The real agent CLIs the conformance suite runs, each pinned in package.json, and how each is
// pointed at the engine: its own configuration file or environment, written into the sandbox
// HOME, with telemetry, update checks and catalog downloads switched off.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { agentGuides, type AgentGuide } from '../../../src/renderer/lib/agentSetup';
import type { Sandbox } from './sandbox';

/** The API shape a connection is called in. */
export type UpstreamShape = 'anthropic' | 'chat' | 'responses' | 'gemini';

export interface Launch {
  cmd: string;
  args: string[];
  env: Record<string, string>;
}

export interface AgentTarget {
  /** The engine's proxy (no path) and the client key the agent presents. */
  proxyUrl: string;
  clientKey: string;
  model: string;
  prompt: string;
}

export interface AgentSpec {
  id: string;
  /** The npm package and the version package.json pins. */
  pkg: string;
  bin: string;
  /**
   * Installed on first use into its own folder (node_modules/.agents/<id>) at this exact version,
   * instead of from package.json: for a package whose lock entry `npm ci` cannot take (opencode and
   * qwen-code name platform packages the registry here does not have, so their lock entries fail
   * `npm ci` on every machine).
   */
  ownInstall?: string;
  /** The shape the agent speaks, served natively by a connection of that shape. */
  native: UpstreamShape;
  /** Bound on one run (the process group is killed after it). */
  timeoutMs: number;
  /**
   * Hosts the agent still tries to reach with everything we can switch off switched off. The
   * sandbox's egress guard refuses them; the suite fails on any host not listed.
   */
  knownEgress: string[];
  launch(sb: Sandbox, t: AgentTarget): Launch;
}

const ROOT = resolve(import.meta.dirname, '../../..');

/** The file the "Connect your agent" page prints for this agent, for this engine and key. */
export function dashboardSnippet(id: AgentGuide['id'], where: string, t: AgentTarget): string {
  const guides = agentGuides({ proxyUrl: t.proxyUrl, key: t.clientKey, openaiModel: t.model, anthropicModel: t.model, claudeModel: t.model, geminiModel: t.model });
  const code = guides.find((g) => g.id === id)?.snippets.find((s) => s.where === where)?.code;
  if (code === undefined) throw new Error(`no ${where} snippet for ${id}`);
  return code;
}

function writeFile(path: string, text: string): void {
  mkdirSync(resolve(path, '..'), { recursive: true });
  writeFileSync(path, text);
}
const binPath = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const ownPrefix = (id: string) => join(ROOT, 'node_modules', '.agents', id);
const ownBinPath = (id: string, name: string) => join(ownPrefix(id), 'node_modules', '.bin', name);

export const CLAUDE_CODE: AgentSpec = {
  id: 'claude-code',
  pkg: '@anthropic-ai/claude-code',
  bin: 'claude',
  native: 'anthropic',
  timeoutMs: 90_000,
  knownEgress: [],
  launch: (sb, t) => {
    const configDir = join(sb.home, '.claude');
    writeFile(join(configDir, 'settings.json'), dashboardSnippet('claude-code', '~/.claude/settings.json', t));
    return {
      cmd: binPath('claude'),
      args: ['-p', t.prompt, '--dangerously-skip-permissions'],
      env: {
        ...sb.env,
        CLAUDE_CONFIG_DIR: configDir,
        // Side calls (titles, topic checks) ask for the small model; keep them on the test model.
        ANTHROPIC_SMALL_FAST_MODEL: t.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: t.model,
        // Claude Code refuses to skip permissions as root unless it is told it runs in a sandbox.
        IS_SANDBOX: '1',
      },
    };
  },
};

export const CODEX: AgentSpec = {
  id: 'codex',
  pkg: '@openai/codex',
  bin: 'codex',
  native: 'responses',
  timeoutMs: 90_000,
  knownEgress: [],
  launch: (sb, t) => {
    const codexHome = join(sb.home, '.codex');
    // The dashboard's file, with update checks, analytics, plugins, apps and the remote model
    // catalog (github.com, chatgpt.com) switched off: root keys first, tables after.
    const quiet = ['check_for_update_on_startup = false', ''];
    const quietTables = ['', '[analytics]', 'enabled = false', '', '[features]', 'plugins = false', 'apps = false', 'remote_models = false', ''];
    writeFile(join(codexHome, 'config.toml'), [...quiet, dashboardSnippet('codex', '~/.codex/config.toml', t), ...quietTables].join('\n'));
    return {
      cmd: binPath('codex'),
      args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', t.prompt],
      env: { ...sb.env, CODEX_HOME: codexHome, SWITCHYARD_API_KEY: t.clientKey },
    };
  },
};

export const OPENCODE: AgentSpec = {
  id: 'opencode',
  pkg: 'opencode-ai',
  bin: 'opencode',
  ownInstall: '1.18.33',
  native: 'chat',
  timeoutMs: 240_000,
  // opencode installs its plugin SDK (@opencode-ai/plugin) into every config directory in the
  // background, from the npm registry, whatever the settings; refused here, it runs on without it.
  knownEgress: ['registry.npmjs.org:443'],
  launch: (sb, t) => {
    const config = JSON.parse(dashboardSnippet('opencode', '~/.config/opencode/opencode.json', t)) as Record<string, unknown>;
    Object.assign(config, { autoupdate: false, share: 'disabled', permission: { bash: 'allow', edit: 'allow' }, small_model: config.model });
    writeFile(join(sb.env.XDG_CONFIG_HOME!, 'opencode', 'opencode.json'), JSON.stringify(config, null, 2));
    return { cmd: ownBinPath('opencode', 'opencode'), args: ['run', '-m', `switchyard/${t.model}`, t.prompt], env: { ...sb.env } };
  },
};

export const QWEN_CODE: AgentSpec = {
  id: 'qwen-code',
  pkg: '@qwen-code/qwen-code',
  bin: 'qwen',
  ownInstall: '0.24.4',
  native: 'chat',
  timeoutMs: 180_000,
  knownEgress: [],
  launch: (sb, t) => {
    const settings = JSON.parse(dashboardSnippet('qwen-code', '~/.qwen/settings.json', t)) as Record<string, unknown>;
    settings.privacy = { usageStatisticsEnabled: false };
    writeFile(join(sb.home, '.qwen', 'settings.json'), JSON.stringify(settings, null, 2));
    return { cmd: ownBinPath('qwen-code', 'qwen'), args: ['-p', t.prompt, '--yolo'], env: { ...sb.env, SWITCHYARD_API_KEY: t.clientKey } };
  },
};

export const GEMINI_CLI: AgentSpec = {
  id: 'gemini-cli',
  pkg: '@google/gemini-cli',
  bin: 'gemini',
  ownInstall: '0.61.0',
  native: 'gemini',
  timeoutMs: 180_000,
  knownEgress: [],
  launch: (sb, t) => {
    // The dashboard's file (API key sign-in, usage statistics and telemetry off), with update
    // checks and the IDE integration switched off as well.
    const settings = JSON.parse(dashboardSnippet('gemini-cli', '~/.gemini/settings.json', t)) as Record<string, Record<string, unknown>>;
    settings.general = { ...settings.general, enableAutoUpdate: false, enableAutoUpdateNotification: false };
    settings.ide = { enabled: false };
    writeFile(join(sb.home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
    return {
      cmd: ownBinPath('gemini-cli', 'gemini'),
      // The file's model keeps every call on the test model (without one Gemini CLI first sends
      // each prompt to a flash-lite classifier). --skip-trust: the sandbox work dir is a new,
      // untrusted folder, where headless runs refuse to start.
      args: ['-p', t.prompt, '--yolo', '--skip-trust'],
      env: { ...sb.env, ...shellExports(dashboardSnippet('gemini-cli', 'shell', t)) },
    };
  },
};

/** The `export NAME="value"` lines of a shell snippet, as an environment. */
function shellExports(code: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of code.matchAll(/^export ([A-Z_][A-Z0-9_]*)="([^"]*)"$/gm)) env[m[1]!] = m[2]!;
  return env;
}

export interface Installed {
  version: string | null;
  /** Why the agent cannot run here (null when it can). */
  skipReason: string | null;
}

/** Whether the agent's pinned package is installed (installing an `ownInstall` one) and its binary starts. */
export function installed(spec: AgentSpec): Installed {
  const root = spec.ownInstall ? ownPrefix(spec.id) : ROOT;
  const pkgJson = join(root, 'node_modules', spec.pkg, 'package.json');
  if (spec.ownInstall && !existsSync(pkgJson)) {
    try {
      mkdirSync(root, { recursive: true });
      execFileSync('npm', ['install', '--prefix', root, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${spec.pkg}@${spec.ownInstall}`], {
        encoding: 'utf8',
        timeout: 300_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      return { version: null, skipReason: `npm install ${spec.pkg}@${spec.ownInstall} failed: ${(e as Error).message.split('\n')[0]}` };
    }
  }
  if (!existsSync(pkgJson)) return { version: null, skipReason: `${spec.pkg} is not installed (npm install)` };
  const bin = spec.ownInstall ? ownBinPath(spec.id, spec.bin) : binPath(spec.bin);
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' }, stdio: ['ignore', 'pipe', 'pipe'] });
    return { version: /\d+\.\d+\.\d+/.exec(out)?.[0] ?? out.trim(), skipReason: null };
  } catch (e) {
    return { version: null, skipReason: `${spec.bin} --version failed: ${(e as Error).message.split('\n')[0]}` };
  }
}

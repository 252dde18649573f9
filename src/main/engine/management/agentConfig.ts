// "Apply" and "Restore" for the CLI agents on the Connect your agent page: writes Switchyard's few
// keys into the agent's own configuration file (merged into what is there), keeps a copy of the
// file as it was, and records every key it wrote with the value it replaced, so Restore puts back
// exactly those keys (when they still hold what Switchyard wrote) and leaves everything else alone.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentConfigId, AgentConfigStatus } from '../../../shared/agentConfig';
import { ApiError } from '../errors';

/** What an Apply writes for one agent. */
export interface AgentConfigTarget {
  /** Proxy origin, e.g. http://127.0.0.1:8480 (no /v1). */
  proxyUrl: string;
  clientKey: string;
  model: string | null;
}

type JsonPath = string[];
const ABSENT = { absent: true } as const;
type Prior = unknown;

/** One key written: where, what Switchyard put there, and what was there before (or ABSENT). */
interface JsonRecord {
  path: JsonPath;
  value: unknown;
  prior: Prior;
}

/** One TOML piece written: a root key line or a whole table, with the text it replaced. */
interface TomlRecord {
  kind: 'root' | 'table';
  name: string;
  text: string;
  prior: string | null;
}

interface Manifest {
  agent: AgentConfigId;
  file: string;
  backup: string | null;
  appliedAt: number;
  json?: JsonRecord[];
  toml?: TomlRecord[];
}

const FILES: Record<AgentConfigId, string[]> = {
  'claude-code': ['.claude', 'settings.json'],
  codex: ['.codex', 'config.toml'],
  opencode: ['.config', 'opencode', 'opencode.json'],
};

export interface AgentConfigWriterOptions {
  /** The user's home directory (a temporary one in tests). */
  home: string;
  /** Where the records of what was written live (the engine's data dir). */
  stateDir: string;
  now: () => number;
}

export class AgentConfigWriter {
  constructor(private readonly o: AgentConfigWriterOptions) {}

  fileOf(agent: AgentConfigId): string {
    return join(this.o.home, ...FILES[agent]);
  }

  private manifestPath(agent: AgentConfigId): string {
    return join(this.o.stateDir, 'agent-config', `${agent}.json`);
  }

  private manifest(agent: AgentConfigId): Manifest | null {
    const p = this.manifestPath(agent);
    if (!existsSync(p)) return null;
    return JSON.parse(readFileSync(p, 'utf8')) as Manifest;
  }

  status(agent: AgentConfigId): AgentConfigStatus {
    const m = this.manifest(agent);
    return {
      agent,
      file: this.fileOf(agent),
      applied: m !== null,
      appliedAt: m?.appliedAt ?? null,
      backup: m?.backup ?? null,
      keys: m ? (m.json?.map((r) => r.path.join('.')) ?? m.toml?.map((r) => (r.kind === 'table' ? `[${r.name}]` : r.name)) ?? []) : [],
    };
  }

  apply(agent: AgentConfigId, t: AgentConfigTarget): AgentConfigStatus {
    if (agent !== 'claude-code' && !t.model) throw new ApiError(400, 'invalid_request', `Choose a model first: ${agent} needs one in its configuration.`);
    const file = this.fileOf(agent);
    const before = existsSync(file) ? readFileSync(file, 'utf8') : null;
    const previous = this.manifest(agent);
    // A second Apply keeps the first one's backup and prior values: Restore goes back to before Switchyard.
    const backup = previous?.backup ?? (before !== null ? `${file}.switchyard-backup` : null);
    if (before !== null && !previous) copyFileSync(file, backup!);
    const m: Manifest = { agent, file, backup, appliedAt: this.o.now() };
    if (agent === 'codex') {
      const { text, records } = applyToml(before ?? '', codexPieces(t), previous?.toml);
      m.toml = records;
      writeAtomically(file, text);
    } else {
      const doc = parseJsonObject(before, file);
      m.json = applyJson(doc, jsonEdits(agent, t), previous?.json);
      writeAtomically(file, `${JSON.stringify(doc, null, 2)}\n`);
    }
    mkdirSync(dirname(this.manifestPath(agent)), { recursive: true });
    writeAtomically(this.manifestPath(agent), JSON.stringify(m, null, 2));
    return this.status(agent);
  }

  /** Puts back what Switchyard replaced, key by key; keys changed since by someone else stay. */
  restore(agent: AgentConfigId): AgentConfigStatus {
    const m = this.manifest(agent);
    if (!m) throw new ApiError(409, 'not_applied', `Switchyard has not written ${this.fileOf(agent)}.`);
    if (existsSync(m.file)) {
      const current = readFileSync(m.file, 'utf8');
      // A file Switchyard created and that holds nothing else any more goes away again.
      if (m.toml) {
        const text = restoreToml(current, m.toml);
        if (m.backup === null && text.trim() === '') rmSync(m.file);
        else writeAtomically(m.file, text);
      } else {
        const doc = parseJsonObject(current, m.file);
        restoreJson(doc, m.json ?? []);
        if (m.backup === null && Object.keys(doc).length === 0) rmSync(m.file);
        else writeAtomically(m.file, `${JSON.stringify(doc, null, 2)}\n`);
      }
    }
    rmSync(this.manifestPath(agent), { force: true });
    return { ...this.status(agent), backup: m.backup };
  }
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.switchyard-tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

// ---- JSON ----------------------------------------------------------------------------------

function jsonEdits(agent: AgentConfigId, t: AgentConfigTarget): { path: JsonPath; value: unknown }[] {
  const base = t.proxyUrl.replace(/\/+$/, '');
  if (agent === 'claude-code') {
    return [
      { path: ['env', 'ANTHROPIC_BASE_URL'], value: base },
      { path: ['env', 'ANTHROPIC_AUTH_TOKEN'], value: t.clientKey },
      ...(t.model ? [{ path: ['env', 'ANTHROPIC_MODEL'], value: t.model }] : []),
    ];
  }
  return [
    {
      path: ['provider', 'switchyard'],
      value: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Switchyard',
        options: { baseURL: `${base}/v1`, apiKey: t.clientKey },
        models: { [t.model!]: { name: t.model } },
      },
    },
    { path: ['model'], value: `switchyard/${t.model}` },
  ];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseJsonObject(text: string | null, file: string): Record<string, unknown> {
  if (text === null || text.trim() === '') return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ApiError(409, 'unreadable_config', `${file} is not plain JSON (comments?); Switchyard leaves it alone. Copy the snippet in by hand.`);
  }
  if (!isObject(doc)) throw new ApiError(409, 'unreadable_config', `${file} does not hold a JSON object; Switchyard leaves it alone.`);
  return doc;
}

function getAt(doc: Record<string, unknown>, path: JsonPath): Prior {
  let cur: unknown = doc;
  for (const k of path) {
    if (!isObject(cur) || !Object.hasOwn(cur, k)) return ABSENT;
    cur = cur[k];
  }
  return cur;
}

function setAt(doc: Record<string, unknown>, path: JsonPath, value: unknown): void {
  let cur = doc;
  for (const k of path.slice(0, -1)) {
    if (!isObject(cur[k])) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path.at(-1)!] = value;
}

function deleteAt(doc: Record<string, unknown>, path: JsonPath): void {
  const parents: Record<string, unknown>[] = [doc];
  let cur = doc;
  for (const k of path.slice(0, -1)) {
    if (!isObject(cur[k])) return;
    cur = cur[k] as Record<string, unknown>;
    parents.push(cur);
  }
  delete cur[path.at(-1)!];
  // Drop the parents Switchyard's keys left empty (an "env": {} it created).
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length > 0) break;
    delete parents[i - 1]![path[i - 1]!];
  }
}

const isAbsent = (p: Prior) => isObject(p) && (p as { absent?: unknown }).absent === true && Object.keys(p).length === 1;

function applyJson(doc: Record<string, unknown>, edits: { path: JsonPath; value: unknown }[], previous: JsonRecord[] | undefined): JsonRecord[] {
  return edits.map(({ path, value }) => {
    const earlier = previous?.find((r) => r.path.join('\0') === path.join('\0'));
    const prior = earlier ? earlier.prior : getAt(doc, path);
    setAt(doc, path, value);
    return { path, value, prior };
  });
}

function restoreJson(doc: Record<string, unknown>, records: JsonRecord[]): void {
  for (const r of [...records].reverse()) {
    // Someone changed the key since: it is theirs now.
    if (JSON.stringify(getAt(doc, r.path)) !== JSON.stringify(r.value)) continue;
    if (isAbsent(r.prior)) deleteAt(doc, r.path);
    else setAt(doc, r.path, r.prior);
  }
}

// ---- TOML (Codex) ----------------------------------------------------------------------------
// Codex's file is edited as text, not re-serialised, so the user's comments and layout survive:
// a root key is one line before the first table; a table runs from its header to the next one.

interface TomlPiece {
  kind: 'root' | 'table';
  name: string;
  text: string;
}

function codexPieces(t: AgentConfigTarget): TomlPiece[] {
  const base = t.proxyUrl.replace(/\/+$/, '');
  return [
    { kind: 'root', name: 'model_provider', text: 'model_provider = "switchyard"' },
    { kind: 'root', name: 'model', text: `model = ${JSON.stringify(t.model)}` },
    {
      kind: 'table',
      name: 'model_providers.switchyard',
      text: [
        '[model_providers.switchyard]',
        'name = "Switchyard"',
        `base_url = ${JSON.stringify(`${base}/v1`)}`,
        'wire_api = "responses"',
        `http_headers = { Authorization = ${JSON.stringify(`Bearer ${t.clientKey}`)} }`,
      ].join('\n'),
    },
  ];
}

const HEADER = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;

function rootKeyLine(lines: string[], name: string): number {
  const re = new RegExp(`^\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*=`);
  for (let i = 0; i < lines.length; i++) {
    if (HEADER.test(lines[i]!)) return -1;
    if (re.test(lines[i]!)) return i;
  }
  return -1;
}

function firstHeader(lines: string[]): number {
  const i = lines.findIndex((l) => HEADER.test(l));
  return i === -1 ? lines.length : i;
}

/** [start, end) of a table's lines (its header up to the next header), or null. */
function tableSpan(lines: string[], name: string): [number, number] | null {
  const start = lines.findIndex((l) => HEADER.exec(l)?.[1] === name && !l.trim().startsWith('[['));
  if (start === -1) return null;
  let end = start + 1;
  while (end < lines.length && !HEADER.test(lines[end]!)) end++;
  // Blank lines before the next table belong to the gap, not to the table.
  while (end > start + 1 && lines[end - 1]!.trim() === '') end--;
  return [start, end];
}

function setPiece(lines: string[], p: TomlPiece): string | null {
  if (p.kind === 'root') {
    const i = rootKeyLine(lines, p.name);
    if (i !== -1) {
      const prior = lines[i]!;
      lines[i] = p.text;
      return prior;
    }
    lines.splice(firstHeader(lines), 0, p.text);
    return null;
  }
  const span = tableSpan(lines, p.name);
  if (span) {
    const prior = lines.slice(span[0], span[1]).join('\n');
    lines.splice(span[0], span[1] - span[0], ...p.text.split('\n'));
    return prior;
  }
  if (lines.length && lines.at(-1)!.trim() !== '') lines.push('');
  lines.push(...p.text.split('\n'));
  return null;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function applyToml(text: string, pieces: TomlPiece[], previous: TomlRecord[] | undefined): { text: string; records: TomlRecord[] } {
  const lines = splitLines(text);
  const records = pieces.map((p) => {
    const prior = setPiece(lines, p);
    const earlier = previous?.find((r) => r.kind === p.kind && r.name === p.name);
    return { ...p, prior: earlier ? earlier.prior : prior };
  });
  return { text: `${lines.join('\n')}\n`, records };
}

function restoreToml(text: string, records: TomlRecord[]): string {
  const lines = splitLines(text);
  for (const r of [...records].reverse()) {
    if (r.kind === 'root') {
      const i = rootKeyLine(lines, r.name);
      if (i === -1 || lines[i] !== r.text) continue;
      if (r.prior === null) lines.splice(i, 1);
      else lines[i] = r.prior;
      continue;
    }
    const span = tableSpan(lines, r.name);
    if (!span || lines.slice(span[0], span[1]).join('\n') !== r.text) continue;
    if (r.prior !== null) {
      lines.splice(span[0], span[1] - span[0], ...r.prior.split('\n'));
      continue;
    }
    // Remove the table and the blank line Apply put before it.
    const from = span[0] > 0 && lines[span[0] - 1]!.trim() === '' ? span[0] - 1 : span[0];
    lines.splice(from, span[1] - from);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

// What must never reach the text a user reads (issue 22): requirement ids, internal codes,
// setting keys and field names from the code. Technical names stay one click away behind
// components/TechName.tsx, whose revealed value is excluded by the caller ([data-tech-name]), and
// copyable setup snippets (what a user types) are marked [data-snippet] and excluded the same way.
// The rules and the allow-list are explained in docs/decisions/dashboard-22-plain-words.md.
export interface JargonHit {
  rule: string;
  text: string;
  /** Where in the checked text the hit starts. */
  index: number;
}

const RULES: { rule: string; re: RegExp }[] = [
  // R-TW-10, R-CB-01, R-SQ-16..25
  { rule: 'requirement id', re: /\bR-[A-Z]{2,4}-\d+/g },
  // RATE_LIMIT_EXCEEDED, SEMAPHORE_TIMEOUT, HALF_OPEN, SWITCHYARD_PROXY_PORT
  { rule: 'internal code (UPPER_SNAKE)', re: /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g },
  // all_targets_cooling_down, rate_limit, low_priority
  { rule: 'internal code (snake_case)', re: /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g },
  // requestQueue.maxWaitMs, cooldownWait.plainModels, providerBreaker.apikey.failureThreshold
  // (a dotted name with a camelCase part; checked in findJargon)
  { rule: 'setting key', re: /\b[a-z][a-zA-Z0-9]*(?:\.[a-z][a-zA-Z0-9]*)+\b/g },
  // (lowPriorityMode), (executionMaxWaitMs)
  { rule: 'field name in parentheses', re: /\(\s*[a-z]+[A-Z][a-zA-Z0-9]*\s*\)/g },
  // providerSpecificData, autoLimitReset: a field name from the code with two or more humps
  { rule: 'field name', re: /\b[a-z]+(?:[A-Z][a-z0-9]+){2,}\b/g },
  { rule: 'internal phrase', re: /quota family|a known gap|not available yet|not built yet/gi },
];

/**
 * Names a user reads or types that look like the rules: environment variables of the agents
 * themselves (Claude Code, Codex CLI, the OpenAI and Google SDKs), which the setup pages name in
 * prose ("Claude Code reads ANTHROPIC_BASE_URL"). Switchyard's own codes and env names are not here.
 */
const ALLOWED_WORDS = [/^(?:ANTHROPIC|OPENAI|CLAUDE|CODEX|GEMINI|GOOGLE)_[A-Z0-9_]+$/];

/** A file name (`claude_desktop_config.json`, `config.toml`) is a place the user opens, not a code. */
const FILE_SUFFIX = /^\.(?:json|jsonl|toml|ya?ml|env|md|txt|sqlite|db|log)\b/;

/**
 * So is a path or a URL (a run of text without spaces that has a slash in it): the data folder's
 * random suffix (`/tmp/switchyard-e2e-oPgJbi`) is not a field name.
 */
function inPath(text: string, at: number, length: number): boolean {
  let from = at;
  while (from > 0 && !/\s/.test(text[from - 1]!)) from--;
  let to = at + length;
  while (to < text.length && !/\s/.test(text[to]!)) to++;
  return text.slice(from, to).includes('/');
}

/**
 * So is a masked key's tail (`sk-sy-…Y3_C`, `sk-ant-…ab_c`): the last characters of the user's own
 * key after the mask's ellipsis, random, and read by the checker as a code one run in a few dozen.
 */
function inMaskedKey(text: string, at: number): boolean {
  let from = at;
  while (from > 0 && /[A-Za-z0-9_-]/.test(text[from - 1]!)) from--;
  return text[from - 1] === '…';
}

export function findJargon(text: string): JargonHit[] {
  const hits: JargonHit[] = [];
  for (const { rule, re } of RULES) {
    for (const m of text.matchAll(re)) {
      const word = m[0];
      if (ALLOWED_WORDS.some((a) => a.test(word))) continue;
      if (FILE_SUFFIX.test(text.slice(m.index + word.length))) continue;
      if (inPath(text, m.index, word.length)) continue;
      if (inMaskedKey(text, m.index)) continue;
      if (rule === 'setting key' && !/[a-z][A-Z]/.test(word)) continue;
      hits.push({ rule, text: word, index: m.index });
    }
  }
  // One hit per place: "(lowPriorityMode)" is a field name in parentheses, not also a bare field name.
  hits.sort((a, b) => a.index - b.index || b.text.length - a.text.length);
  return hits.filter((h, i) => !hits.slice(0, i).some((o) => h.index >= o.index && h.index + h.text.length <= o.index + o.text.length));
}


// What must never reach the text a user reads (issue 22): requirement ids, internal codes,
// setting keys and field names from the code. Technical names stay one click away behind
// components/TechName.tsx, whose revealed value is excluded by the caller ([data-tech-name]).
export interface JargonHit {
  rule: string;
  text: string;
}

const RULES: { rule: string; re: RegExp }[] = [
  // R-TW-10, R-CB-01, R-SQ-16..25
  { rule: 'requirement id', re: /\bR-[A-Z]{2,4}-\d+/g },
  // RATE_LIMIT_EXCEEDED, SEMAPHORE_TIMEOUT, HALF_OPEN
  { rule: 'internal code (UPPER_SNAKE)', re: /\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b/g },
  // all_targets_cooling_down, rate_limit, low_priority
  { rule: 'internal code (snake_case)', re: /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g },
  // requestQueue.maxWaitMs, cooldownWait.plainModels
  { rule: 'setting key', re: /\b[a-z][a-zA-Z0-9]*\.[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*\b/g },
  // (lowPriorityMode)
  { rule: 'field name in parentheses', re: /\([a-z]+[A-Z][a-zA-Z]*\)/g },
  { rule: 'internal phrase', re: /quota family|a known gap|not available yet/gi },
];

/** Words that look like the rules but are what users read: file names, flags, env names a user types. */
const ALLOWED = [/^[A-Z0-9_]+_(KEY|URL|TOKEN|BASE_URL|API_KEY)$/, /^OPENAI_|^ANTHROPIC_|^GEMINI_|^GOOGLE_/];

export function findJargon(text: string): JargonHit[] {
  const hits: JargonHit[] = [];
  for (const { rule, re } of RULES) {
    for (const m of text.matchAll(re)) {
      if (ALLOWED.some((a) => a.test(m[0]))) continue;
      hits.push({ rule, text: m[0] });
    }
  }
  return hits;
}

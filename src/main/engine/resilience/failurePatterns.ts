// What an upstream error body says, read as plain text: a concurrency limit, a quota, an
// account-wide rate limit, exhausted credits, a banned account, a per-request denial. Matching is
// case-insensitive substring (or a small fixed regex) on the body with whitespace collapsed; never
// a user-supplied RegExp.

/** R-CC-15: the account is healthy but busy. */
const CONCURRENCY = [
  'too many concurrent requests',
  'concurrency limit',
  'parallel request limit',
  '并发数过高',
];

/** Quota / usage-limit wording (R-CC-20: a quota body wins over a concurrency phrase). */
const QUOTA: RegExp[] = [
  /quota/i,
  /额度/,
  /\busage limit/i,
  /\b(daily|weekly|monthly|hourly) (usage |request |token )?limit/i,
  /resource[_ ]exhausted/i,
];

/** The rate limit named is the account's (every model draws on it), not one model's RPM/TPM. */
const ACCOUNT_LIMIT: RegExp[] = [/\baccount'?s? (overall )?rate[- ]limits?\b/i, /\baccount[- ]wide (rate )?limits?\b/i];

/** Money, not a rate: the account cannot pay for requests until someone tops it up. */
const CREDITS: RegExp[] = [
  /credit balance is too low/i,
  /insufficient (credits?|balance|funds)/i,
  /out of credits?/i,
  /credits? (have |has )?(been )?(exhausted|depleted|used up)/i,
  /no (remaining )?credits?\b/i,
  /余额不足/,
  /billing[_ ]hard[_ ]limit/i,
];

/** Account-ban wording (R-CC-36: `banned` comes only from these). */
const BANNED: RegExp[] = [
  /\b(account|organi[sz]ation|user) (has been |is |was )?(banned|suspended|deactivated|terminated|disabled)\b/i,
  /\byour account (has been|is) (locked|blocked)\b/i,
];

/** R-CC-37: a per-request denial (e.g. Anthropic OAuth 403 "Request not allowed"): never a ban. */
const REQUEST_REJECTED: RegExp[] = [/\brequest not allowed\b/i];

const squash = (body: string) => (body.length > 16_384 ? body.slice(0, 16_384) : body).replace(/\s+/g, ' ');

export interface BodySignals {
  concurrency: boolean;
  quota: boolean;
  /** The limit is the account's, not one model's (issue 9: a 429 then cools the whole connection). */
  accountLimit: boolean;
  credits: boolean;
  banned: boolean;
  requestRejected: boolean;
}

const NONE: BodySignals = Object.freeze({
  concurrency: false,
  quota: false,
  accountLimit: false,
  credits: false,
  banned: false,
  requestRejected: false,
});

/** Reads every signal from one error body. */
export function bodySignals(body: string): BodySignals {
  if (!body) return NONE;
  const text = squash(body);
  const lower = text.toLowerCase();
  const requestRejected = REQUEST_REJECTED.some((r) => r.test(text));
  return {
    concurrency: CONCURRENCY.some((p) => lower.includes(p)),
    quota: QUOTA.some((r) => r.test(text)),
    accountLimit: ACCOUNT_LIMIT.some((r) => r.test(text)),
    credits: CREDITS.some((r) => r.test(text)),
    // A per-request denial is never read as a ban, whatever else the text says.
    banned: !requestRejected && BANNED.some((r) => r.test(text)),
    requestRejected,
  };
}

/** R-CC-15 detector on its own (exported for tests and the queue). */
export const looksLikeConcurrencyLimit = (body: string) => bodySignals(body).concurrency;

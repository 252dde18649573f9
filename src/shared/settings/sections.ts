// How the settings are grouped for people (issue 22): a handful of sections, each made of a few
// titled parts, every setting in exactly one part. The order here is the order on the page. Also
// the search over the settings: plain label and description first, the technical names second.
// Pure data and functions; the page renders it, the tests check that every setting is placed once.
import type { SettingKey } from './index';

export interface SettingSectionPart {
  /** A sub-heading inside the section (omitted when the section has one part). */
  title: string | null;
  keys: readonly SettingKey[];
}

export interface SettingSection {
  /** Stable id, used in the page's address (#/settings/<id>). */
  id: string;
  title: string;
  /** One line: what the settings of this section decide. */
  summary: string;
  parts: readonly SettingSectionPart[];
}

export const SETTING_SECTIONS: readonly SettingSection[] = [
  {
    id: 'failover',
    title: 'Failover and retries',
    summary: 'How many tries a request gets, when the same connection is tried again, and when a request waits for a short pause to end.',
    parts: [
      {
        title: 'Attempts and retries',
        keys: ['proxy.maxAttempts', 'sameTargetRetry.maxRetries', 'sameTargetRetry.maxHintedWaitMs', 'sameTargetRetry.unhintedDelayMs'],
      },
      {
        title: 'Waiting out short pauses',
        keys: [
          'comboCooldownWait.enabled',
          'cooldownWait.plainModels',
          'comboCooldownWait.maxWaitMs',
          'comboCooldownWait.maxAttempts',
          'comboCooldownWait.budgetMs',
        ],
      },
    ],
  },
  {
    id: 'cooldowns',
    title: 'Cooldowns and lockouts',
    summary: 'How long a rate-limited or failing connection, or one model on it, is left out of routing.',
    parts: [
      {
        title: 'Rate limits and connection cooldowns',
        keys: [
          'connectionCooldown.useUpstreamRetryHints',
          'connectionCooldown.apikeyBaseMs',
          'connectionCooldown.oauthBaseMs',
          'connectionCooldown.maxBackoffSteps',
          'rotation.rateLimitResetSeconds',
          'providerQuotaOverrides',
          'streamStallCooldown.enabled',
        ],
      },
      {
        title: 'Model lockouts',
        keys: [
          'modelLockout.enabled',
          'modelLockout.errorCodes',
          'modelLockout.baseCooldownMs',
          'modelLockout.maxCooldownMs',
          'modelLockout.useExponentialBackoff',
          'modelLockout.maxBackoffSteps',
        ],
      },
    ],
  },
  {
    id: 'breakers',
    title: 'Circuit breakers',
    summary: 'When a whole provider, or one misbehaving connection, is taken out of routing after repeated failures.',
    parts: [
      {
        title: 'Provider circuit breaker',
        keys: [
          'providerBreaker.failureRatePercent',
          'providerBreaker.apikey.degradationThreshold',
          'providerBreaker.apikey.failureThreshold',
          'providerBreaker.apikey.resetTimeoutMs',
          'providerBreaker.oauth.degradationThreshold',
          'providerBreaker.oauth.failureThreshold',
          'providerBreaker.oauth.resetTimeoutMs',
          'providerBreaker.local.failureThreshold',
          'providerBreaker.local.resetTimeoutMs',
        ],
      },
      {
        title: 'Provider pause after many failures',
        keys: [
          'providerCooldown.enabled',
          'providerCooldown.apikey.failureThreshold',
          'providerCooldown.apikey.failureWindowMs',
          'providerCooldown.apikey.cooldownMs',
          'providerCooldown.oauth.failureThreshold',
          'providerCooldown.oauth.failureWindowMs',
          'providerCooldown.oauth.cooldownMs',
          'providerCooldown.local.failureThreshold',
          'providerCooldown.local.failureWindowMs',
          'providerCooldown.local.cooldownMs',
        ],
      },
      {
        title: 'Failing connection taken out (outlier ejection)',
        keys: [
          'outlierEjection.enabled',
          'outlierEjection.consecutiveFailures',
          'outlierEjection.baseEjectionMs',
          'outlierEjection.maxEjectionMs',
          'outlierEjection.siblingWindowMs',
        ],
      },
    ],
  },
  {
    id: 'queue',
    title: 'Request queue and concurrency',
    summary: 'How requests wait their turn before they are sent, and how many may run at once.',
    parts: [
      {
        title: 'Request queue',
        keys: ['requestQueue.autoEnableApiKeyProviders', 'requestQueue.maxWaitMs', 'requestQueue.executionMaxWaitMs', 'requestQueue.maxQueueDepth'],
      },
      { title: 'Concurrency limits', keys: ['quotaShareConcurrencyLimit.enabled', 'concurrency.waitTimeoutMs', 'concurrency.maxWaiting'] },
    ],
  },
  {
    id: 'streams',
    title: 'Streams',
    summary: 'How long a streamed answer may take or stall before it is abandoned, and how a broken stream is recovered.',
    parts: [
      {
        title: 'Deadlines',
        keys: [
          'streams.firstOutputTimeoutMs',
          'streams.contentStallTimeoutMs',
          'streams.attemptDeadlineMs',
          'streams.modelDeadlines',
          'streams.holdBackBytes',
        ],
      },
      { title: 'Recovery', keys: ['streamRecovery.enabled', 'streamRecovery.midstream.enabled'] },
      {
        title: 'Slow-stream watchdog',
        keys: [
          'streamRecovery.throughputWatchdog.enabled',
          'streamRecovery.throughputWatchdog.minBytesPerSecond',
          'streamRecovery.throughputWatchdog.warmupMs',
          'streamRecovery.throughputWatchdog.windowMs',
          'streamRecovery.throughputWatchdog.minMeasurableBytes',
        ],
      },
    ],
  },
  {
    id: 'routing',
    title: 'Routing and sessions',
    summary: 'Which connection serves a request, how long a conversation stays on the same one, and what combos know about models.',
    parts: [
      { title: 'Choosing a connection', keys: ['routing.strategy', 'p2cLatency.weight', 'sessionAffinityTtlMs'] },
      { title: 'Model facts for combos', keys: ['combos.contextWindows', 'combos.modelPrices', 'combos.autoWeights'] },
    ],
  },
  {
    id: 'errorRules',
    title: 'Provider error rules',
    summary: 'Your own reading of provider errors, and the address used to learn each connection\'s outgoing IP.',
    parts: [{ title: null, keys: ['providerErrorRules', 'providerErrorDefaults', 'egress.probeUrl'] }],
  },
  {
    id: 'claude',
    title: 'Claude accounts',
    summary: 'Sign-in and token refresh for Claude subscription connections.',
    parts: [
      {
        title: null,
        keys: [
          'claude.refreshMarginMs',
          'claude.authorizeUrl',
          'claude.tokenUrl',
          'claude.pasteRedirectUri',
          'claude.apiBaseUrl',
          'claude.clientId',
          'claude.scopes',
        ],
      },
    ],
  },
  {
    id: 'network',
    title: 'Proxy and network',
    summary: 'The local proxy agents call, and the time limits on connections in and out.',
    parts: [
      { title: 'Local proxy', keys: ['proxy.port', 'proxy.maxBodyBytes', 'proxy.headersTimeoutMs', 'proxy.requestTimeoutMs'] },
      { title: 'Calls to providers', keys: ['upstream.connectTimeoutMs', 'upstream.headersTimeoutMs', 'upstream.idleTimeoutMs'] },
    ],
  },
  {
    id: 'logs',
    title: 'Logs',
    summary: 'How much of the request log is kept.',
    parts: [{ title: null, keys: ['logs.retentionDays', 'logs.maxRows'] }],
  },
  {
    id: 'notifications',
    title: 'Notifications',
    summary: 'Which kinds of notification Switchyard raises in the dashboard and on the desktop.',
    parts: [{ title: null, keys: ['notifications.muted'] }],
  },
];

const SECTION_BY_KEY: ReadonlyMap<string, SettingSection> = new Map(
  SETTING_SECTIONS.flatMap((s) => s.parts.flatMap((p) => p.keys.map((k) => [k, s] as const))),
);

/** The section a setting is shown in (undefined only for a key no section lists: a test forbids it). */
export const sectionOf = (key: string): SettingSection | undefined => SECTION_BY_KEY.get(key);

export const sectionById = (id: string): SettingSection | undefined => SETTING_SECTIONS.find((s) => s.id === id);

/** What search reads of a setting: its plain words, and its technical names. */
export interface Searchable {
  key: string;
  label: string;
  description: string;
  env: readonly string[];
}

/** How a setting matched a search: by what a user reads, or only by a technical name. */
export type SettingMatch = 'plain' | 'technical' | null;

const words = (q: string) => q.toLowerCase().split(/\s+/).filter(Boolean);

/**
 * Every word of the query must appear. The plain label, description and section title count
 * first; a setting whose plain words miss still matches on its key or environment variable names
 * (so "maxWaitMs" or "RATE_LIMIT_MAX_WAIT_MS" finds its row), reported as a technical match.
 */
export function matchSetting(s: Searchable, query: string): SettingMatch {
  const ws = words(query);
  if (ws.length === 0) return 'plain';
  const plain = `${s.label} ${s.description} ${sectionOf(s.key)?.title ?? ''}`.toLowerCase();
  if (ws.every((w) => plain.includes(w))) return 'plain';
  const technical = `${plain} ${s.key} ${s.env.join(' ')}`.toLowerCase();
  if (ws.every((w) => technical.includes(w))) return 'technical';
  return null;
}

/** The sections and parts that hold a match, in page order, each part with its matching settings. */
export function filterSections<T extends Searchable>(
  settings: readonly T[],
  query: string,
): { section: SettingSection; parts: { title: string | null; settings: { setting: T; match: Exclude<SettingMatch, null> }[] }[] }[] {
  const byKey = new Map(settings.map((s) => [s.key, s]));
  const out = [];
  for (const section of SETTING_SECTIONS) {
    const parts = [];
    for (const part of section.parts) {
      const hits = [];
      for (const key of part.keys) {
        const s = byKey.get(key);
        if (!s) continue;
        const match = matchSetting(s, query);
        if (match) hits.push({ setting: s, match });
      }
      if (hits.length) parts.push({ title: part.title, settings: hits });
    }
    if (parts.length) out.push({ section, parts });
  }
  return out;
}

// The Error rules page's "test this error text": one error (provider, status, body) run through
// the real status restatement and the real classifier with the live rule registry, and the
// verdict described in words: which rule decided and what it would do to the connection, the
// model or the provider. Pure: settings values come in as arguments.
import type { ErrorRuleTestResult, ErrorRulesView } from '../../../shared/model';
import type { SettingValues } from '../../../shared/settings';
import { limiterScopeOf } from '../admission/limiterScope';
import { classifyStatus, isDetectorVerdict, type FailureClass } from './classifyFailure';
import { egressBranchApplies, EGRESS_QUOTA_COOLDOWN_MS } from './egressLockout';
import { RULES_NEVER_CHECKED, type ErrorRuleRegistry } from './errorRuleRegistry';
import { EGRESS_BUCKETED_LOCK_PROVIDERS, FULL_TEXT_RULE_PROVIDERS, HONORS_RULE_LOCK_SCOPE_PROVIDERS } from './providerErrorRules';
import { bodySignals } from './failurePatterns';
import { meteredPerAccount } from './rateLimitScope';
import { applyStatusRestatement, STATUS_RESTATEMENT_RULES } from './statusRestatement';

export interface ErrorTestInput {
  provider: string;
  status: number;
  body: string;
  headers?: Record<string, string>;
}

type Values = Pick<
  SettingValues,
  'modelLockout.baseCooldownMs' | 'modelLockout.maxCooldownMs' | 'connectionCooldown.apikeyBaseMs' | 'connectionCooldown.useUpstreamRetryHints'
>;

/** "90 s", "10 min", "1 h", "6 h", "30 days": the largest unit that states it exactly, else rounded. */
export function formatMs(ms: number): string {
  const DAY = 86_400_000;
  if (ms >= DAY && ms % DAY === 0) return ms === DAY ? '1 day' : `${ms / DAY} days`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  const s = ms / 1000;
  if (s < 120) return `${Math.round(s * 10) / 10} s`;
  const m = s / 60;
  if (m < 120) return `${Math.round(m * 10) / 10} min`;
  const h = m / 60;
  if (h < 48) return `${Math.round(h * 10) / 10} h`;
  return `${Math.round((h / 24) * 10) / 10} days`;
}

export function explainProviderError(registry: ErrorRuleRegistry, input: ErrorTestInput, now: number, v: Values): ErrorRuleTestResult {
  const provider = input.provider.trim();
  const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, x]) => [k.toLowerCase(), x]));
  const restated = applyStatusRestatement(provider, input.status, input.body);
  const status = restated?.toStatus ?? input.status;
  const probe = { provider, authClass: 'apikey' as const, kind: 'openai-compatible' as const, baseUrl: '' };
  const metering = { perAccount: meteredPerAccount(probe), perModelQuota: limiterScopeOf(probe) === 'model' };
  const c = classifyStatus(status, headers, input.body, now, metering, { registry, provider });
  const notes: string[] = [];

  if (restated) {
    notes.push(
      `The upstream's ${restated.fromStatus} is restated as ${restated.toStatus} (${restated.ruleId}) before anything classifies it; the client receives ${restated.toStatus}` +
        (restated.clientRetryAfterMs !== null ? ` with Retry-After ${formatMs(restated.clientRetryAfterMs)} (the internal cooldown is set separately).` : '.'),
    );
  }
  if (RULES_NEVER_CHECKED.has(status)) {
    notes.push('HTTP 400 is never checked against rules (a known gap): it keeps its own handling, so a rule with status 400 never fires.');
  }
  if (c.rule && !c.rule.honored) {
    notes.push(`Built-in rule ${c.rule.id} matches, but ${provider} is not on the scope allowlist: it is informational and changes nothing.`);
  }
  if (registry.builtInFor(provider).some((r) => r.textMarkers) && !registry.seesFullText(provider)) {
    notes.push(`Built-in rules of ${provider} see only the error's {code, type}, not its text.`);
  }
  if (registry.hasOperatorRuleFor(provider)) {
    notes.push(`${provider} has an operator rule or default: its rules see the full text and their scope is honoured.`);
  }

  const matched: ErrorRuleTestResult['matched'] = c.rule
    ? { source: c.rule.source, id: c.rule.id, index: c.rule.source === 'operator' ? Number(/\[(\d+)\]/.exec(c.rule.id)?.[1] ?? -1) : null, honored: c.rule.honored }
    : isDetectorVerdict(c, bodySignals(input.body))
      ? { source: 'detector', id: c.reason, index: null, honored: true }
      : { source: 'none', id: null, index: null, honored: false };

  const egress = egressBranchApplies({ provider, disableCooling: false }, c);
  if (egress) {
    notes.push(
      `${provider} is egress-bucketed: every ${EGRESS_BUCKETED_LOCK_PROVIDERS.join('/')} connection whose last known egress IP matches is held as long.`,
    );
  }
  return {
    restated,
    status,
    matched,
    reason: c.reason,
    scope: egress ? 'connection' : c.scope,
    effect: describeEffect(c, provider, egress, v),
    cooldownMs: c.cooldown.kind === 'operator' && !c.cooldown.withHint ? c.cooldown.ms : (c.rule?.honored && c.rule.cooldown?.mode === 'exact' ? c.rule.cooldown.ms : null),
    terminal: c.cooldown.kind === 'terminal' ? c.cooldown.status : null,
    failover: c.failover,
    tripsBreaker: c.tripsBreaker,
    clientRetryAfterMs: c.retryAfterMs ?? restated?.clientRetryAfterMs ?? null,
    notes,
  };
}

function describeEffect(c: FailureClass, provider: string, egress: boolean, v: Values): string {
  const base = formatMs(v['connectionCooldown.apikeyBaseMs']);
  const backoff = `backoff (${base}, then doubling; an upstream retry hint wins${v['connectionCooldown.useUpstreamRetryHints'] ? '' : ' when hints are on'})`;
  const rule = c.rule?.honored ? c.rule : null;
  if (egress) {
    return c.reason === 'quota_exhausted'
      ? `Cools the whole connection for at least ${formatMs(EGRESS_QUOTA_COOLDOWN_MS)} (quota), never a per-model lock.`
      : `Cools the whole connection with the rate-limit ${backoff}, never a per-model lock.`;
  }
  if (rule?.scope === 'model') {
    const cd = rule.cooldown;
    const max = Math.max(v['modelLockout.maxCooldownMs'], v['modelLockout.baseCooldownMs']);
    const len =
      cd === null
        ? `the model-lockout step (${formatMs(v['modelLockout.baseCooldownMs'])}, escalating up to ${formatMs(max)})`
        : cd.mode === 'exact'
          ? `exactly ${formatMs(cd.ms)}`
          : cd.mode === 'capped'
            ? `${formatMs(Math.min(cd.ms, max))} (declared ${formatMs(cd.ms)}, capped by the lockout maximum)`
            : `${formatMs(cd.ms)} or the upstream's hint if longer`;
    return `Locks this model on this connection for ${len}; the connection keeps serving its other models.`;
  }
  if (rule?.scope === 'provider') {
    const cd = rule.cooldown;
    const held = cd === null ? '' : ` Every connection of ${provider} is held for ${cd.mode === 'floor' ? `${formatMs(cd.ms)} or the upstream's hint if longer` : formatMs(cd.ms)}.`;
    return `A provider-wide failure: counts toward the ${provider} breaker and window gate.${held}`;
  }
  const k = c.cooldown;
  switch (k.kind) {
    case 'terminal':
      return `Marks the connection ${k.status}: a terminal state that lasts until its credentials or configuration change.`;
    case 'operator':
      return k.withHint
        ? `Cools the whole connection for ${formatMs(k.ms)}, or the upstream's retry hint if longer (never shortening a longer cooldown).`
        : `Cools the whole connection for exactly ${formatMs(k.ms)} (never shortening a longer cooldown).`;
    case 'rate_limit':
      return c.scope === 'model'
        ? `Rests only this model on this connection with the rate-limit ${backoff}; its other models keep serving.`
        : `Cools the whole connection with the rate-limit ${backoff}.`;
    case 'backoff':
      return `Cools the whole connection with ${backoff.replace('; an upstream retry hint wins', '').replace(' when hints are on', '')}.`;
    case 'credential':
      return `Cools the connection with backoff; the third credential rejection in a row marks it expired.`;
    case 'fixed':
      return `Rests the connection for ${formatMs(k.ms)} (busy, not spent), without a backoff step.`;
    case 'stall':
      return 'Records the stall on the connection.';
    case 'record':
      if (c.reason === 'request_rejected') return 'Locks this model for 1 min (doubling up to 1 h); never a ban.';
      return c.scope === 'provider'
        ? `Fails over; counts toward the ${provider} breaker${c.tripsBreaker ? '' : ' window gate (not the breaker)'} and outlier ejection.`
        : 'Records the error; the connection stays in routing and the request fails over.';
    case 'none':
      return 'The request itself was refused: nothing is recorded and no other connection is tried.';
  }
}

/** The read-only half of the Error rules page. */
export function errorRulesView(registry: ErrorRuleRegistry): ErrorRulesView {
  return {
    builtIn: registry.catalog.map((r) => ({
      id: r.id,
      providers: [...r.providers],
      statuses: r.statuses ? [...r.statuses] : null,
      textMarkers: r.textMarkers ? [...r.textMarkers] : null,
      codes: r.codes ? [...r.codes] : null,
      reason: r.reason,
      scope: r.scope,
      baseCooldownMs: r.baseCooldownMs ?? null,
      note: r.note,
    })),
    restatements: Object.entries(STATUS_RESTATEMENT_RULES).flatMap(([provider, rules]) =>
      rules.map((r) => ({
        id: r.id,
        provider,
        fromStatuses: [...r.fromStatuses],
        toStatus: r.toStatus,
        textMarkers: [...r.textMarkers],
        excludeMarkers: [...r.excludeMarkers],
        defaultRetryAfterMs: r.defaultRetryAfterMs,
      })),
    ),
    fullTextProviders: [...FULL_TEXT_RULE_PROVIDERS],
    honorsScopeProviders: [...HONORS_RULE_LOCK_SCOPE_PROVIDERS],
    egressBucketedProviders: [...EGRESS_BUCKETED_LOCK_PROVIDERS],
    operatorProviders: [...registry.operatorProviderList()],
  };
}

// The provider error-rule registry (SPEC §7b): the built-in catalog, the operator's rules
// (`settings.providerErrorRules`) and the operator's general defaults
// (`settings.providerErrorDefaults`), and the one matcher the classifier and the dashboard's rule
// tester share. Precedence (R-PER-05..18), for one error of one provider:
//   1. (classifier) the built-in detectors keep their own phrases: banned, credits exhausted,
//      request not allowed, concurrency limit; and HTTP 400 is never checked here (R-PER-19);
//   2. operator rules, in order, the first match wins (status AND case-insensitive substring);
//   3. the built-in catalog, seeing the full text only on FULL_TEXT_RULE_PROVIDERS (or a provider
//      with an operator rule or default), acted on only on HONORS_RULE_LOCK_SCOPE_PROVIDERS (same
//      exception); elsewhere a match is informational;
//   4. the provider's default, only for 402, 403, 408, 429 and 5xx.
// Matching is plain substring search on the text lower-cased with whitespace runs collapsed: no
// operator input ever becomes a RegExp (no ReDoS). Pure apart from the rules it holds.
import type { ErrorRuleReason, ErrorRuleScope, OperatorErrorRule, ProviderErrorDefaults } from '../../../shared/settings';
import {
  BUILT_IN_ERROR_RULES,
  FULL_TEXT_RULE_PROVIDERS,
  HONORS_RULE_LOCK_SCOPE_PROVIDERS,
  type BuiltInErrorRule,
} from './providerErrorRules';

/** How a matched rule's cooldown combines with the other inputs. */
export type RuleCooldownMode =
  /** The rule's own length, whatever the upstream hints (operator rules, R-PER-10). */
  | 'exact'
  /** The larger of this and the upstream's retry hint (defaults, R-PER-16). */
  | 'floor'
  /** At most the model-lockout maximum (built-in model rules, R-USR-10). */
  | 'capped';

export interface RuleMatch {
  source: 'operator' | 'builtin' | 'default';
  /** "operator[2]", the built-in rule's id, or "default:<provider>". */
  id: string;
  /** The operator rule's index in providerErrorRules. */
  index?: number;
  /** null: derived from the status (R-PER-14). */
  reason: ErrorRuleReason | null;
  scope: ErrorRuleScope;
  /** False for a built-in rule of a provider off the scope allowlist: shown, not acted on (R-PER-04). */
  honored: boolean;
  cooldown: { mode: RuleCooldownMode; ms: number } | null;
}

/** R-PER-12: the only statuses a general default applies to (plus every 5xx). */
export const DEFAULT_STATUSES: ReadonlySet<number> = new Set([402, 403, 408, 429]);
export const defaultApplies = (status: number) => DEFAULT_STATUSES.has(status) || (status >= 500 && status <= 599);

/** R-PER-19: statuses never checked against any rule (400 keeps its own pattern arrays). */
export const RULES_NEVER_CHECKED: ReadonlySet<number> = new Set([400]);

/** The error as rules see it: the text (lower case, whitespace collapsed) and its structured code/type. */
export interface ErrorView {
  text: string;
  code: string | null;
  type: string | null;
}

const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');

const scalar = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v.trim().toLowerCase() : typeof v === 'number' && Number.isFinite(v) ? String(v) : null;

/** Reads `{error: {code, type}}` (OpenAI, Anthropic) or a top-level `code` / `type`. */
export function errorViewOf(body: string): ErrorView {
  let code: string | null = null;
  let type: string | null = null;
  const head = body.trimStart();
  if (head.startsWith('{')) {
    try {
      const j = JSON.parse(body) as Record<string, unknown>;
      const e = j && typeof j.error === 'object' && j.error !== null ? (j.error as Record<string, unknown>) : null;
      code = scalar(e?.code) ?? scalar(j.code);
      // Anthropic's envelope says {type: "error", error: {type: ...}}: the inner type is the one.
      const top = scalar(j.type);
      type = scalar(e?.type) ?? (top === 'error' ? null : top);
    } catch {
      // not JSON: text only
    }
  }
  return { text: fold(body), code, type };
}

export interface RegistryOptions {
  catalog?: readonly BuiltInErrorRule[];
  fullTextProviders?: readonly string[];
  honorsScopeProviders?: readonly string[];
}

export class ErrorRuleRegistry {
  readonly catalog: readonly BuiltInErrorRule[];
  private readonly fullText: ReadonlySet<string>;
  private readonly honors: ReadonlySet<string>;
  private rules: readonly OperatorErrorRule[] = [];
  private defaults: ProviderErrorDefaults = {};
  /** Providers with an operator rule or a default (R-PER-05, R-PER-15). */
  private operatorProviders: ReadonlySet<string> = new Set();
  /** Built-in rules by provider. */
  private readonly byProvider = new Map<string, BuiltInErrorRule[]>();

  constructor(o: RegistryOptions = {}) {
    this.catalog = o.catalog ?? BUILT_IN_ERROR_RULES;
    this.fullText = new Set(o.fullTextProviders ?? FULL_TEXT_RULE_PROVIDERS);
    this.honors = new Set(o.honorsScopeProviders ?? HONORS_RULE_LOCK_SCOPE_PROVIDERS);
    for (const r of this.catalog) {
      for (const p of r.providers) {
        let list = this.byProvider.get(p);
        if (!list) this.byProvider.set(p, (list = []));
        list.push(r);
      }
    }
  }

  /** Replaces the operator's rules and defaults (already validated by the settings schema). */
  setOperator(rules: readonly OperatorErrorRule[], defaults: ProviderErrorDefaults): void {
    this.rules = rules.map((r) => (r.match !== undefined ? { ...r, match: fold(r.match) } : r));
    this.defaults = defaults;
    this.operatorProviders = new Set([...rules.map((r) => r.provider), ...Object.keys(defaults)]);
  }

  /** R-PER-05 / R-PER-15: an operator rule or a default exists for this provider. */
  hasOperatorRuleFor(provider: string): boolean {
    return this.operatorProviders.has(provider);
  }

  /** Providers with an operator rule or default, sorted. */
  operatorProviderList(): string[] {
    return [...this.operatorProviders].sort();
  }

  /** R-PER-01: this provider's built-in rules see the error text, not just {code, type}. */
  seesFullText(provider: string): boolean {
    return this.fullText.has(provider) || this.operatorProviders.has(provider);
  }

  /** R-PER-04: this provider's built-in rule scopes are acted on. */
  honorsScope(provider: string): boolean {
    return this.honors.has(provider) || this.operatorProviders.has(provider);
  }

  /** Built-in rules of one provider (the Error rules page lists them all). */
  builtInFor(provider: string): readonly BuiltInErrorRule[] {
    return this.byProvider.get(provider) ?? [];
  }

  /**
   * The first operator rule, else the first built-in rule, that matches this error. null when none
   * does, and always for the statuses rules never see (400, R-PER-19).
   */
  match(provider: string, status: number, body: string, view: ErrorView = errorViewOf(body)): RuleMatch | null {
    if (RULES_NEVER_CHECKED.has(status)) return null;
    if (this.operatorProviders.has(provider)) {
      for (let i = 0; i < this.rules.length; i++) {
        const r = this.rules[i]!;
        if (r.provider !== provider) continue;
        if (r.status !== undefined && r.status !== status) continue;
        if (r.match !== undefined && !view.text.includes(r.match)) continue;
        return {
          source: 'operator',
          id: `operator[${i}]`,
          index: i,
          reason: r.reason ?? null,
          scope: r.scope ?? 'connection',
          honored: true,
          cooldown: r.cooldownMs !== undefined ? { mode: 'exact', ms: r.cooldownMs } : null,
        };
      }
    }
    const builtIns = this.byProvider.get(provider);
    if (!builtIns) return null;
    const fullText = this.seesFullText(provider);
    for (const r of builtIns) {
      if (r.statuses && !r.statuses.includes(status)) continue;
      if (r.textMarkers) {
        // Off the full-text allowlist the rule gets only {code, type}: text markers cannot match.
        if (!fullText || !r.textMarkers.some((m) => view.text.includes(fold(m)))) continue;
      }
      if (r.codes && !r.codes.some((c) => c.toLowerCase() === view.code || c.toLowerCase() === view.type)) continue;
      return {
        source: 'builtin',
        id: r.id,
        reason: r.reason,
        scope: r.scope,
        honored: this.honorsScope(provider),
        cooldown: r.baseCooldownMs !== undefined ? { mode: r.scope === 'model' ? 'capped' : 'exact', ms: r.baseCooldownMs } : null,
      };
    }
    return null;
  }

  /** The provider's general default for this status (R-PER-11..16), or null. */
  defaultFor(provider: string, status: number): RuleMatch | null {
    if (!defaultApplies(status)) return null;
    const d = Object.prototype.hasOwnProperty.call(this.defaults, provider) ? this.defaults[provider] : undefined;
    if (!d) return null;
    return {
      source: 'default',
      id: `default:${provider}`,
      reason: d.reason ?? null,
      scope: d.scope ?? 'connection',
      honored: true,
      cooldown: { mode: 'floor', ms: d.cooldownMs },
    };
  }
}

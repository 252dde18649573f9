// The native fallback after a translated request is refused. A 400 (or 422) is the request's
// fault, so it is normally relayed after one attempt: another connection would say the same. A
// translated attempt is different: the upstream judged our translation, not the client's request,
// and a target that speaks the client's protocol natively may take the original as it is. So when
// a translated attempt is refused as a bad request (not a prompt too long, which the context-length
// rule owns, and not a content-policy refusal, which any target would repeat), the walk goes on
// once, to native targets only; translated targets are skipped from then on. With no native target
// left, the 400 is relayed as before. The refusal is not held against the connection: the
// classifier's verdict for a bad request writes no cooldown and no breaker evidence.
import type { AttemptVerdict, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { InboundCall } from './inbound';
import { codecOf } from './translation';

/** Wording of a refusal any target would repeat (safety, moderation, policy), lower-case. */
const POLICY = /content[ _-]?(filter|polic|management|moderation)|moderation|flagged|safety|usage polic|violat|blocked by/;

export class NativeFallback {
  /** Who refused the translation, for the skip detail; null until one did. */
  private refusedBy: string | null = null;

  constructor(
    private readonly call: InboundCall,
    private readonly order: readonly Target[],
  ) {}

  /**
   * Records a failure; true when it was a translated attempt refused as malformed and a native
   * target not tried yet remains (the walk may go on to it).
   */
  note(target: Target, failure: UpstreamFailure, verdict: AttemptVerdict, spent: ReadonlySet<Target>): boolean {
    if (this.refusedBy !== null || verdict.reason !== 'bad_request') return false;
    if (failure.status !== 400 && failure.status !== 422) return false;
    if (codecOf(this.call, target) === null) return false;
    if (POLICY.test(`${failure.body} ${failure.message}`.toLowerCase())) return false;
    if (!this.order.some((t) => !spent.has(t) && codecOf(this.call, t) === null)) return false;
    this.refusedBy = `${target.conn.name} (${target.model})`;
    return true;
  }

  /** Null when the target may still be tried; else the skip detail. */
  bar(target: Target): string | null {
    if (this.refusedBy === null || codecOf(this.call, target) === null) return null;
    return `${this.refusedBy} refused the translated request as malformed; only targets that take it natively are tried`;
  }
}

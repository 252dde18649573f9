// What a request learns when an attempt is refused as a bad request (a 4xx that is the request's
// fault, so the classifier cools nothing and another connection of the same model would say the
// same): some such refusals can still be served elsewhere. Each rule can let the walk go on and
// bars the targets that would refuse too:
// - the context-length rule (routing/combos/contextLength.ts): only larger windows;
// - the tool-count limit (routing/toolLimits.ts): not the models known to take fewer tools;
// - the native fallback (nativeFallback.ts): after a refused translation, native targets only.
import type { SkipReason } from '../../../shared/model';
import type { AttemptVerdict, UpstreamFailure } from '../resilience/port';
import { ContextFallback } from '../routing/combos/contextLength';
import type { ModelCatalog } from '../routing/combos/modelCatalog';
import type { Target } from '../routing/target';
import { ToolFallback, toolCountOf, type ToolLimits } from '../routing/toolLimits';
import type { InboundCall } from './inbound';
import { NativeFallback } from './nativeFallback';

export class Refusals {
  private readonly context: ContextFallback;
  private readonly tools: ToolFallback;
  private readonly native: NativeFallback;

  constructor(catalog: ModelCatalog, call: InboundCall, order: readonly Target[], toolLimits: ToolLimits) {
    this.context = new ContextFallback(catalog);
    this.tools = new ToolFallback(toolCountOf(call), toolLimits);
    this.native = new NativeFallback(call, order);
  }

  /** A refused attempt that another target may still serve: true = the walk goes on. */
  goesOn(target: Target, failure: UpstreamFailure, verdict: AttemptVerdict, spent: ReadonlySet<Target>, now: number): boolean {
    return this.context.note(target, failure) || this.tools.note(target, failure, now) || this.native.note(target, failure, verdict, spent);
  }

  /** Why a target may not be tried for this request, or null. */
  bar(target: Target, now: number): { reason: SkipReason; detail: string } | null {
    const context = this.context.bar(target);
    if (context) return { reason: 'context_too_small', detail: context };
    const tools = this.tools.bar(target, now);
    if (tools) return { reason: 'too_many_tools', detail: tools };
    const native = this.native.bar(target);
    if (native) return { reason: 'untranslatable', detail: native };
    return null;
  }
}

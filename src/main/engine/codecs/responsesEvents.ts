// An upstream OpenAI Responses stream read into the neutral model. Responses is never a translation
// target (a connection that serves it is used natively), but a native Responses stream's
// continuation is spliced onto the client's stream through the neutral model like any other, so
// mid-stream recovery needs this reader: text and refusal deltas, reasoning summary and text deltas,
// function calls (keyed by output index) and their argument deltas, the end of each item, usage, and
// the terminal events (completed, incomplete, failed).
import type { Frame } from '../streams/frame';
import type { IrSink, IrStop, IrUsage } from './ir';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function usageFromResponses(u: any): Partial<IrUsage> {
  if (!u || typeof u !== 'object') return {};
  return {
    input: num(u.input_tokens),
    output: num(u.output_tokens),
    cachedInput: num(u.input_tokens_details?.cached_tokens),
    reasoning: num(u.output_tokens_details?.reasoning_tokens),
  };
}

function stopFromIncomplete(reason: unknown): IrStop {
  if (reason === 'max_output_tokens') return 'max_tokens';
  if (reason === 'content_filter') return 'refusal';
  return 'end_turn';
}

export class ResponsesEventReader {
  private finished = false;
  private failed = false;
  private started = false;
  private hadTools = false;

  read(f: Frame, sink: IrSink): void {
    if (this.finished || this.failed) return;
    if (f.kind === 'comment') return sink.keepalive(f.comment ?? '');
    if (f.error) {
      this.failed = true;
      return sink.error(f.error);
    }
    const j = f.json;
    if (!j) return;
    switch (f.type) {
      case 'response.created':
      case 'response.in_progress':
        if (!this.started) {
          this.started = true;
          sink.start(typeof j.response?.id === 'string' ? j.response.id : null, typeof j.response?.model === 'string' ? j.response.model : null);
        }
        return;
      case 'response.output_item.added': {
        const item = j.item ?? {};
        if (item.type === 'function_call') {
          this.hadTools = true;
          sink.toolStart(num(j.output_index) ?? 0, String(item.call_id ?? item.id ?? ''), String(item.name ?? ''));
        }
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof j.delta === 'string' && j.delta) sink.text(j.delta);
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        sink.reasoning(typeof j.delta === 'string' ? j.delta : '');
        return;
      case 'response.function_call_arguments.delta':
        if (typeof j.delta === 'string' && j.delta) sink.toolArgs(num(j.output_index) ?? 0, j.delta);
        return;
      case 'response.output_item.done':
        return sink.blockEnd();
      case 'response.completed':
        this.finished = true;
        sink.usage(usageFromResponses(j.response?.usage));
        sink.stop(this.hadTools ? 'tool_use' : 'end_turn', null);
        return sink.finish();
      case 'response.incomplete':
        this.finished = true;
        sink.usage(usageFromResponses(j.response?.usage));
        sink.stop(stopFromIncomplete(j.response?.incomplete_details?.reason), null);
        return sink.finish();
      default:
        return;
    }
  }

  end(_sink: IrSink): 'complete' | 'truncated' | 'error' {
    return this.failed ? 'error' : this.finished ? 'complete' : 'truncated';
  }
}

// A codec's response side, composed from an upstream reader and an inbound writer around the
// neutral model: frames go in one at a time and the inbound protocol's SSE text comes out at once
// (nothing is held back beyond the event being translated).
import type { ShapedError } from '../streams/errorEvents';
import type { Frame } from '../streams/frame';
import type { ClientState } from './clientState';
import type { IrResponse, IrSink, IrUsage, IrWriter } from './ir';
import type { ResponseContext, ResponseTranslator, StreamEnd, TranslatedUsage } from './types';

export interface UpstreamReader {
  read(f: Frame, sink: IrSink): void;
  end(sink: IrSink): 'complete' | 'truncated' | 'error';
}

export interface UpstreamSide {
  readJson(json: unknown, ctx: ResponseContext): IrResponse;
  reader(ctx: ResponseContext): UpstreamReader;
}

export type ClientWriter = IrWriter & { readonly usageSoFar: IrUsage; snapshot(): ClientState };

export interface InboundSide {
  writeJson(r: IrResponse, ctx: ResponseContext): Record<string, unknown>;
  writer(ctx: ResponseContext): ClientWriter;
}

export class Translator implements ResponseTranslator {
  private readonly reader: UpstreamReader;
  private readonly writer: ClientWriter;
  private jsonUsage: IrUsage | null = null;
  private failed = false;
  private ended: StreamEnd | null = null;

  constructor(
    private readonly up: UpstreamSide,
    private readonly inbound: InboundSide,
    private readonly ctx: ResponseContext,
  ) {
    this.reader = up.reader(ctx);
    this.writer = inbound.writer(ctx);
  }

  json(upstream: unknown): Record<string, unknown> {
    const ir = this.up.readJson(upstream, this.ctx);
    this.jsonUsage = ir.usage;
    return this.inbound.writeJson(ir, this.ctx);
  }

  frame(f: Frame): string {
    if (this.failed || this.ended) return '';
    this.reader.read(f, this.writer);
    return this.writer.take();
  }

  end(): StreamEnd {
    if (this.ended) return { ...this.ended, text: '' };
    if (this.failed) return (this.ended = { text: '', truncated: false, outcome: 'error' });
    const outcome = this.reader.end(this.writer);
    this.ended = { text: this.writer.take(), truncated: outcome === 'truncated', outcome };
    return this.ended;
  }

  fail(e: ShapedError): string {
    if (this.failed) return '';
    this.failed = true;
    this.writer.error({ status: e.status, type: '', code: e.code ?? null, message: e.message });
    return this.writer.take();
  }

  usage(): TranslatedUsage {
    const u = this.jsonUsage ?? this.writer.usageSoFar;
    return { inputTokens: u.input, outputTokens: u.output, cacheReadTokens: u.cachedInput, cacheWriteTokens: u.cacheWrite };
  }

  clientState(): ClientState {
    return this.writer.snapshot();
  }
}

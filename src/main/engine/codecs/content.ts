// Small shared pieces of content mapping: data URLs, JSON arguments, ids, text joins.
import type { ImageSource } from './ir';

/** `data:image/png;base64,AAAA` → base64 source; anything else is a URL. */
export function imageSourceFromUrl(url: string): ImageSource {
  const m = parseDataUrl(url);
  if (m) return { type: 'base64', mediaType: m.mediaType, data: m.data };
  return { type: 'url', url };
}

export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return null;
  return { mediaType: meta.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) };
}

export const dataUrl = (mediaType: string, data: string) => `data:${mediaType};base64,${data}`;

export function imageUrlOf(source: ImageSource): string {
  return source.type === 'base64' ? dataUrl(source.mediaType, source.data) : source.url;
}

/** Media type of an inline file: from its data URL, else from the file name. */
export function fileMediaType(dataOrUrl: string, filename: string | null): { mediaType: string; data: string } {
  const m = parseDataUrl(dataOrUrl);
  if (m) return m;
  const lower = (filename ?? '').toLowerCase();
  const mediaType = lower.endsWith('.pdf') ? 'application/pdf' : lower.endsWith('.txt') ? 'text/plain' : 'application/pdf';
  return { mediaType, data: dataOrUrl };
}

/**
 * Tool-call arguments (a JSON string, as Chat and Responses carry them) as the object Anthropic
 * wants. Empty means no arguments. Text that is not a JSON object (a model's broken output echoed
 * back in history) is kept, wrapped, rather than dropped.
 */
export function argumentsObject(args: string): { value: Record<string, unknown>; wrapped: boolean } {
  if (args.trim() === '') return { value: {}, wrapped: false };
  try {
    const v = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return { value: v as Record<string, unknown>, wrapped: false };
  } catch {
    // fall through
  }
  return { value: { _raw_arguments: args }, wrapped: true };
}

/** Anthropic ids must match ^[a-zA-Z0-9_-]+$; others (Kimi's `functions.get:0`) are mapped, deterministically. */
export function anthropicToolId(id: string): string {
  if (/^[a-zA-Z0-9_-]+$/.test(id)) return id;
  const s = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return s || 'toolu_empty';
}

/** The id part of an upstream id, to build ours from (`chatcmpl-abc` → `abc`, `msg_01x` → `01x`). */
export function idBase(id: string | null, fallback: string): string {
  const raw = id && id.length > 0 ? id : fallback;
  const s = raw.replace(/^(chatcmpl-|msg_|resp_)/, '').replace(/[^a-zA-Z0-9_-]/g, '');
  return s || 'switchyard';
}

export function joinText(parts: readonly { text: string }[], sep = '\n\n'): string {
  if (parts.length === 1) return parts[0]!.text;
  let out = '';
  for (const p of parts) {
    if (p.text === '') continue;
    out = out === '' ? p.text : out + sep + p.text;
  }
  return out;
}

export const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

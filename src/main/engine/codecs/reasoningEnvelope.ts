// Anthropic thinking carried through a Responses client. Codex keeps reasoning items (with
// `include: ['reasoning.encrypted_content']`) and sends them back next turn; Anthropic accepts a
// thinking block back only with its signature, and insists on it when a turn continues tool calls
// with thinking on. So the signature (or redacted thinking data) rides in `encrypted_content`
// behind a prefix, and the thinking text in the summary. Real OpenAI encrypted content never has
// the prefix, so it is recognised and left out of an Anthropic request.

const THINKING = 'swy.anthropic.thinking:';
const REDACTED = 'swy.anthropic.redacted:';

export function toEnvelope(r: { signature: string | null; redacted: string | null }): string | null {
  if (r.redacted) return REDACTED + r.redacted;
  if (r.signature) return THINKING + r.signature;
  return null;
}

export function fromEnvelope(encrypted: unknown): { signature: string | null; redacted: string | null } | null {
  if (typeof encrypted !== 'string') return null;
  if (encrypted.startsWith(THINKING)) return { signature: encrypted.slice(THINKING.length), redacted: null };
  if (encrypted.startsWith(REDACTED)) return { signature: null, redacted: encrypted.slice(REDACTED.length) };
  return null;
}

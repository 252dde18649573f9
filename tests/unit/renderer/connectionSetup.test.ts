// Setting up a connection (issue 22): every provider preset makes a valid connection, a preset fills
// the form without losing what the user typed, model import offers only models not listed yet,
// and the protection control's words follow the mode first and the engine's view second.
import { describe, expect, it } from 'vitest';
import { buildCreateInput, emptyForm, withPreset } from '../../../src/renderer/lib/connectionForm';
import { newModelsOf } from '../../../src/renderer/features/connections/ModelImport';
import { effectiveProtection } from '../../../src/renderer/features/connections/ProtectionControl';
import { connectionCreateSchema } from '../../../src/shared/contract';
import { PROVIDER_PRESETS, presetById } from '../../../src/shared/providerPresets';

describe('provider presets', () => {
  it('cover the providers the issue names, with unique ids', () => {
    const names = PROVIDER_PRESETS.map((p) => p.id);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['openai', 'anthropic', 'openrouter', 'google', 'groq', 'deepseek', 'mistral', 'xai', 'together', 'fireworks', 'cerebras', 'ollama', 'lmstudio', 'vllm', 'llamacpp']),
    );
  });

  it('each fills a form that becomes a valid create input (with a key where one is needed)', () => {
    for (const p of PROVIDER_PRESETS) {
      const form = { ...withPreset(emptyForm(), p), secret: p.keyRequired ? 'sk-test-0000000000' : '' };
      const r = buildCreateInput(form);
      expect(r.ok, p.id).toBe(true);
      if (!r.ok) continue;
      expect(connectionCreateSchema.safeParse(r.input).success, p.id).toBe(true);
      expect(r.input).toMatchObject({ kind: p.kind, provider: p.provider, baseUrl: p.baseUrl, models: p.models, name: p.name });
      expect(p.keyUrl).toMatch(/^https:\/\//);
    }
  });

  it('keeps a name the user typed and the key, and replaces a name that came from another preset', () => {
    const groq = presetById('groq')!;
    const typed = withPreset({ ...emptyForm(), name: 'My work key', secret: 'sk-typed' }, groq);
    expect(typed).toMatchObject({ name: 'My work key', secret: 'sk-typed', baseUrl: 'https://api.groq.com/openai/v1', kind: 'openai-compatible' });
    const switched = withPreset(withPreset(emptyForm(), presetById('openai')!), groq);
    expect(switched).toMatchObject({ name: 'Groq', kind: 'openai-compatible', servesResponses: false, provider: 'groq' });
    expect(withPreset(emptyForm(), presetById('ollama')!)).toMatchObject({ kind: 'local', authClass: 'local', models: '' });
  });
});

describe('model import', () => {
  it('offers the listed models the connection does not list yet, once each, in the upstream order', () => {
    expect(newModelsOf({ models: ['b'] }, ['c', 'b', 'a', 'c'])).toEqual(['c', 'a']);
    expect(newModelsOf({ models: ['a'] }, ['a'])).toEqual([]);
  });
});

describe('protection control words', () => {
  it('on and off say what they do whatever the view says', () => {
    expect(effectiveProtection('on', { protected: false, protectionMode: 'auto' }, 'oauth')).toBe('Protected now: switched on');
    expect(effectiveProtection('off', { protected: true, protectionMode: 'auto' }, 'apikey')).toBe('Not protected now: switched off');
  });

  it('automatic reads the engine view, and ignores a view from before the change', () => {
    expect(effectiveProtection('auto', { protected: true, protectionMode: 'auto' }, 'apikey')).toMatch(/^Protected now: on automatically/);
    expect(effectiveProtection('auto', { protected: false, protectionMode: 'auto' }, 'apikey')).toMatch(/automatic rule is off in Settings/);
    expect(effectiveProtection('auto', { protected: false, protectionMode: 'auto' }, 'oauth')).toMatch(/API-key connections only/);
    expect(effectiveProtection('auto', { protected: false, protectionMode: 'off' }, 'apikey')).toBe('Automatic: protected while this connection is enabled');
  });
});

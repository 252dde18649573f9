// What the dashboard says about translation: which agents a connection can serve and how, the
// Responses switch in the connection form, and translated attempts in plain names.
import { describe, expect, it } from 'vitest';
import { buildCreateInput, buildUpdateInput, emptyForm, formFromConnection, withKind } from '../../../src/renderer/lib/connectionForm';
import { agentReach, agentReachText, translationLabel } from '../../../src/renderer/lib/translation';
import { connection } from './builders';

describe('agents a connection can serve', () => {
  it('an Anthropic connection serves Claude Code natively and the OpenAI agents through translation', () => {
    expect(agentReachText(connection({ protocol: 'anthropic', provider: 'glm', models: [] }))).toBe(
      'Claude Code native · Codex CLI via translation (as glm/<model>) · Chat clients via translation (as glm/<model>) · Gemini CLI via translation (as glm/<model>)',
    );
  });

  it('a Gemini connection serves Gemini CLI natively and every other agent through translation, never "via Chat"', () => {
    const gemini = agentReach(connection({ kind: 'gemini', protocol: 'gemini', provider: 'gemini', servesResponses: false, models: ['gemini-2.5-pro'] }));
    expect(gemini.map((r) => [r.agent, r.how, r.note])).toEqual([
      ['Claude Code', 'via translation', 'its listed models or gemini/<model>'],
      ['Codex CLI', 'via translation', 'its listed models or gemini/<model>'],
      ['Chat clients', 'via translation', 'its listed models or gemini/<model>'],
      ['Gemini CLI', 'native', null],
    ]);
  });

  it('OpenAI itself serves Codex natively; a Chat-only server serves it through Chat; Claude Code is translated', () => {
    const openai = agentReach(connection({ kind: 'openai', protocol: 'openai', provider: 'openai', servesResponses: true }));
    expect(openai.map((r) => [r.agent, r.how])).toEqual([
      ['Claude Code', 'via translation'],
      ['Codex CLI', 'native'],
      ['Chat clients', 'native'],
      ['Gemini CLI', 'via translation'],
    ]);
    const compat = agentReach(connection({ kind: 'openai-compatible', protocol: 'openai', provider: 'deepseek', servesResponses: false, models: ['deepseek-chat'] }));
    expect(compat.map((r) => [r.agent, r.how, r.note])).toEqual([
      ['Claude Code', 'via translation', 'its listed models or deepseek/<model>'],
      ['Codex CLI', 'via Chat', null],
      ['Chat clients', 'native', null],
      ['Gemini CLI', 'via translation', 'its listed models or deepseek/<model>'],
    ]);
  });

  it('names translated attempts in plain words', () => {
    expect(translationLabel('anthropic-messages→openai-chat')).toBe('Anthropic Messages → Chat Completions');
    expect(translationLabel('openai-responses→anthropic-messages')).toBe('Responses → Anthropic Messages');
    expect(translationLabel('gemini→openai-chat')).toBe('Gemini → Chat Completions');
  });
});

describe('the Responses switch in the connection form', () => {
  it("starts at the kind's default and follows a kind change", () => {
    expect(emptyForm('openai').servesResponses).toBe(true);
    expect(emptyForm('openai-compatible').servesResponses).toBe(false);
    expect(withKind(emptyForm('openai'), 'local').servesResponses).toBe(false);
  });

  it('is sent for OpenAI-protocol kinds only, and on edit only when changed', () => {
    const created = buildCreateInput({ ...emptyForm('openai-compatible'), name: 'C', provider: 'c', baseUrl: 'http://127.0.0.1:1/v1', servesResponses: true });
    expect(created.ok && created.input.servesResponses).toBe(true);
    const anthropic = buildCreateInput({ ...emptyForm('anthropic'), name: 'A', secret: 'sk-ant-x' });
    expect(anthropic.ok && 'servesResponses' in anthropic.input).toBe(false);
    const view = connection({ kind: 'openai-compatible', protocol: 'openai', servesResponses: false });
    const same = buildUpdateInput(formFromConnection(view), view);
    expect(same.ok && same.input).toEqual({});
    const flipped = buildUpdateInput({ ...formFromConnection(view), servesResponses: true }, view);
    expect(flipped.ok && flipped.input).toEqual({ servesResponses: true });
  });
});

// Claude Code's first run when the only connection is OpenAI-compatible (accepting any model):
// its own model id is listed nowhere, so the answer is a 404 that names the three fixes and where
// to make them (also when a disabled Anthropic connection exists: it is named, and so are the
// fixes); "Route model ids" (routeAgentModels) writes the claude-* mapping, and the next run is
// served through translation. Routing the same pattern again re-points it, without a second combo.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { translationSuite } from './support';

const ask = (client: Anthropic, stream = false) =>
  client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream } as Anthropic.MessageCreateParamsNonStreaming);

const messageOf = (e: unknown): string => ((e as InstanceType<typeof Anthropic.APIError>).error as { error: { message: string } }).error.message;

describe('an agent whose model ids no connection lists', () => {
  const s = translationSuite();

  it('gets an error naming the fixes, and one click on "Route model ids" makes the next run succeed', async () => {
    const compat = await s.t.addConnection({ name: 'DeepSeek', kind: 'openai-compatible', provider: 'deepseek', baseUrl: s.fake.openaiUrl, secret: 'sk-deepseek-first-1', models: ['deepseek-chat'] });
    expect(compat.passthroughModels).toBe(true);

    const first = await ask(s.anthropic).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Anthropic.NotFoundError);
    const message = messageOf(first);
    expect(message).toContain('model "claude-sonnet-4-5" is not available');
    expect(message).toContain('list "claude-sonnet-4-5" on a connection (Connections page)');
    expect(message).toContain('ask for "provider/model", e.g. "deepseek/deepseek-chat"');
    expect(message).toContain('"Route model ids" on the Connect your agent page');
    expect(message).toContain('claude-* → deepseek/deepseek-chat');

    // A disabled Anthropic connection is named, and the fixes are still given.
    const off = await s.t.addConnection({ name: 'Old Claude key', kind: 'anthropic', baseUrl: s.fake.anthropicUrl, secret: 'sk-ant-disabled-1', enabled: false });
    const second = messageOf(await ask(s.anthropic).catch((e: unknown) => e));
    expect(second).toContain('the only connections that serve it are disabled ("Old Claude key"); enable one on the Connections page');
    expect(second).toContain('"Route model ids" on the Connect your agent page');
    await s.t.api.deleteConnection({ id: off.id });
    expect(s.fake.requests).toEqual([]);

    const route = await s.t.api.routeAgentModels({ pattern: 'claude-*', connectionId: compat.id, model: 'deepseek-chat' });
    expect(route.combo).toMatchObject({ name: 'claude-route', targets: [{ connectionId: compat.id, model: 'deepseek-chat' }] });
    expect(route.mapping).toMatchObject({ pattern: 'claude-*', comboId: route.combo.id });

    const msg = await ask(s.anthropic);
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello from the fake upstream.' });
    expect(s.fake.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', body: { model: 'deepseek-chat' } });

    // Again for the same pattern: the same combo, re-pointed; no second combo or mapping.
    const again = await s.t.api.routeAgentModels({ pattern: 'claude-*', connectionId: compat.id, model: 'deepseek-reasoner' });
    expect(again.combo.id).toBe(route.combo.id);
    expect(again.mapping.id).toBe(route.mapping.id);
    expect((await s.t.api.listCombos()).map((c) => c.name)).toEqual(['claude-route']);
    await ask(s.anthropic);
    expect(s.fake.requests.at(-1)!.body).toMatchObject({ model: 'deepseek-reasoner' });
  });

  it('refuses a connection that does not exist, naming the field', async () => {
    const err = await s.t.api.routeAgentModels({ pattern: 'gemini-*', connectionId: 'nope', model: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, field: 'connectionId' });
  });
});

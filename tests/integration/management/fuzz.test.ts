// Property-based fuzzing of the management API (fast-check, seeded and bounded): every contract
// method gets arbitrary JSON through the boundary dispatcher, raw and shaped after its own input
// (its field names with values of any type; for settings, real setting keys with any values). An
// answer is a value or a typed 4xx — never a 500, never a stack trace — and a refused input
// changes nothing: settings, connections, keys, combos and mappings stay as they were.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, type Handlers, type MethodName } from '../../../src/shared/contract';
import { SETTING_KEYS } from '../../../src/shared/settings';
import { dispatch } from '../../../src/main/engine/management/dispatch';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { startTestEngine, type TestEngine } from '../../support/harness';

const SEED = 21_022;
const RUNS_PER_METHOD = 40;
const METHODS = Object.keys(contract) as MethodName[];
const TRICKY_KEYS = ['__proto__', 'constructor', 'prototype', '', 'id', 'name', 'model', 'patch'];

/** The keys a method's input object declares (none for a union). */
function inputKeys(name: MethodName): string[] {
  const shape = (contract[name].input as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Arbitrary JSON, and objects made of the method's own field names with values of any type. */
function inputFor(name: MethodName): fc.Arbitrary<unknown> {
  const keys = [...inputKeys(name), ...TRICKY_KEYS];
  const value = fc.jsonValue({ maxDepth: 3 });
  const shaped = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 });
  const arbs: fc.Arbitrary<unknown>[] = [fc.jsonValue({ maxDepth: 4 }), fc.constant(undefined), shaped];
  if (name === 'patchSettings') {
    arbs.push(fc.record({ patch: fc.dictionary(fc.constantFrom(...SETTING_KEYS), value, { minKeys: 1, maxKeys: 3 }) }));
  }
  return fc.oneof(...arbs);
}

describe('management API under arbitrary input', () => {
  let t: TestEngine;
  let handlers: Handlers;
  const claudeDir = mkdtempSync(join(tmpdir(), 'switchyard-fuzz-claude-'));
  const sink = new MemorySink();
  const log = createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => 0 });

  /** Everything a refused input must leave as it was. */
  async function state(): Promise<string> {
    const [settings, connections, keys, combos, mappings] = await Promise.all([
      handlers.getSettings({}),
      handlers.listConnections({}),
      handlers.listClientKeys({}),
      handlers.listCombos({}),
      handlers.listModelMappings({}),
    ]);
    return JSON.stringify([settings.values, connections, keys, combos, mappings]);
  }

  beforeAll(async () => {
    // Claude Code's credentials are looked for in an empty folder, never the machine's own.
    t = await startTestEngine({ env: { CLAUDE_CONFIG_DIR: claudeDir } });
    handlers = t.engine.handlers;
    await t.api.patchSettings({ patch: { 'routing.strategy': 'p2c', 'logs.retentionDays': 3 } });
    await t.addConnection({ name: 'Kept', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9', secret: 'sk-ant-fuzz-kept-aaaaaaaa' });
    await t.api.createCombo({ name: 'kept', targets: [{ provider: 'anthropic', model: 'claude-x' }] });
    await t.api.createModelMapping({ pattern: 'claude-*', combo: 'kept' });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(claudeDir, { recursive: true, force: true });
  });

  it('every method answers a value or a typed 4xx, and a refusal writes nothing', async () => {
    const seen = new Map<MethodName, { ok: number; refused: number }>();
    for (const name of METHODS) {
      const tally = { ok: 0, refused: 0 };
      seen.set(name, tally);
      await fc.assert(
        fc.asyncProperty(inputFor(name), async (raw) => {
          const before = await state();
          const r = await dispatch(handlers, name, raw, log);
          if (r.ok) {
            tally.ok++;
            return;
          }
          tally.refused++;
          expect(r.status, `${name} ${JSON.stringify(raw)}`).toBeGreaterThanOrEqual(400);
          expect(r.status, `${name} ${JSON.stringify(raw)}`).toBeLessThan(500);
          expect(typeof r.body.error.code).toBe('string');
          expect(r.body.error.message).not.toMatch(/\n\s+at /);
          expect(await state(), `${name} refused ${JSON.stringify(raw)} but changed something`).toBe(before);
        }),
        { seed: SEED, numRuns: RUNS_PER_METHOD },
      );
    }
    expect(sink.lines.filter((l) => l.includes('management.unhandled'))).toEqual([]);
    // Each method with an input was refused at least once (the fuzz reached its boundary).
    for (const name of METHODS) if (inputKeys(name).length > 0) expect(seen.get(name)!.refused, name).toBeGreaterThan(0);
    // What was there before is still there.
    const settings = await t.api.getSettings();
    expect(settings.values).toMatchObject({ routing: { strategy: 'p2c' }, logs: { retentionDays: 3 } });
    expect((await t.api.listConnections()).map((c) => c.name)).toContain('Kept');
    expect((await t.api.listModelMappings()).map((m) => m.pattern)).toContain('claude-*');
  });
});

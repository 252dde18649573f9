// The Overview's "requests rescued" counts a stream that broke mid-answer and was completed on
// another connection (a mid-stream continuation), as well as a failover before the first output.
// Real Anthropic SDK, fake upstream, the stream rig's fake clock; the figures are read back through
// getUsage and checked against the request log.
import { describe, expect, it } from 'vitest';
import { anthropicEvents as e, anthropicText } from '../../support/fakeUpstream';
import { MODEL, readAnthropic, streamRigPerTest, textOf, until, words } from '../streams/support';

const KA = 'sk-ant-usage-a-aaaaaaaaaaaa';
const KB = 'sk-ant-usage-b-bbbbbbbbbbbb';
const FULL = words(0, 60);

describe('usage: a continued stream is a rescued request', () => {
  const s = streamRigPerTest();

  it('counts the continued stream once, as a success and as rescued, on the connection that finished it', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA, { priority: 1 });
    const b = await r.addAnthropic('Key B', KB, { priority: 2 });
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });

    // A plain success first, on A.
    s.fake.script({ key: KA }, [{ chunks: anthropicText(MODEL, FULL) }]);
    expect(textOf((await readAnthropic(r.anthropic).done).final)).toBe(FULL.join(''));

    // Then A breaks after 30 words and B continues the answer.
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(30), { id: 'msg_second', outputTokens: 30 }) }]);
    const read = readAnthropic(r.anthropic);
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_first'), e.textStart(), ...FULL.slice(0, 30).map((w) => e.text(w)));
    await until(() => read.seen() === FULL.slice(0, 30).join(''), 'the client to read 30 words');
    live.cut();
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(FULL.join(''));

    await r.settle();
    const report = await r.t.api.getUsage({ range: 'hour' });
    const logged = (await r.t.api.listLogs({ limit: 10 })).entries;
    expect(logged).toHaveLength(2);
    expect([report.totals.requests, report.totals.successes, report.totals.errors, report.totals.rescued]).toEqual([2, 2, 0, 1]);
    const byConnection = Object.fromEntries(report.breakdown.connection.map((row) => [row.label, [row.requests, row.rescued]]));
    const continued = logged.find((x) => x.connectionId === b.id);
    expect(continued, 'the continued request is logged as served by the connection that finished it').toBeDefined();
    expect(byConnection['Key B']).toEqual([1, 1]);
    expect(byConnection['Key A']).toEqual([1, 0]);
  });
});

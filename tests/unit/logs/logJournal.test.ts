// The request log's crash journal: what a run leaves behind is read back by the next (the last line
// of a request wins, a line cut off by the kill is skipped), and segments go once committed.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLogJournal, NO_JOURNAL, SEGMENT_BYTES } from '../../../src/main/engine/logs/logJournal';
import { logEntry } from '../renderer/builders';

describe('the request-log journal', () => {
  let dir: string;
  const errors: unknown[] = [];
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'switchyard-journal-')), 'j');
    errors.length = 0;
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('gives the next run what a killed run journalled, the final entry over the provisional one', async () => {
    const a = new FileLogJournal(dir, (e) => errors.push(e));
    a.append(logEntry({ id: 'r1', errorCode: 'log_incomplete' }));
    a.append(logEntry({ id: 'r2' }));
    a.seal();
    a.append(logEntry({ id: 'r1', errorCode: null, outputTokens: 7 }));
    await a.durable();
    // Killed mid-line: the last line is cut off.
    const files = readdirSync(dir);
    appendFileSync(join(dir, files[files.length - 1]!), '{"id":"r3","sta');
    const b = new FileLogJournal(dir, (e) => errors.push(e));
    const { entries, discard } = b.leftover();
    expect(entries.map((e) => [e.id, e.errorCode, e.outputTokens])).toEqual([
      ['r2', null, 2],
      ['r1', null, 7],
    ]);
    discard();
    b.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("returns each entry's line: the JSON the store's worker builds the rows from (none without a journal)", async () => {
    const j = new FileLogJournal(dir, (e) => errors.push(e));
    const e = logEntry({ id: 'r1', outputTokens: 9 });
    const line = j.append(e);
    expect(line).toBe(JSON.stringify(e));
    await j.durable();
    expect(readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8')).toBe(`${line}\n`);
    expect(NO_JOURNAL.append(e)).toBeNull();
    j.close();
    expect(errors).toEqual([]);
  });

  it('writes the entries of one event-loop turn together, and durable() resolves once they are written', async () => {
    const j = new FileLogJournal(dir, (e) => errors.push(e));
    const segment = () => join(dir, readdirSync(dir)[0]!);
    j.append(logEntry({ id: 'r1' }));
    j.append(logEntry({ id: 'r2' }));
    // Nothing is written while the turn runs...
    expect(readFileSync(segment(), 'utf8')).toBe('');
    let written = false;
    const d = j.durable().then(() => (written = true));
    expect(written).toBe(false);
    await d;
    // ...then both lines at once, and a killed process would leave them to the next run.
    expect(readFileSync(segment(), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['r1', 'r2']);
    // Nothing pending: durable() is already true.
    await j.durable();
    const b = new FileLogJournal(dir, (e) => errors.push(e));
    expect(b.leftover().entries.map((e) => e.id)).toEqual(['r1', 'r2']);
    b.close();
    j.close();
    expect(errors).toEqual([]);
  });

  it('writes what is pending before sealing or closing, and never leaves durable() waiting', async () => {
    const j = new FileLogJournal(dir, (e) => errors.push(e));
    j.append(logEntry({ id: 'r1' }));
    const waiting = j.durable();
    const { committed } = j.seal();
    await waiting;
    const again = new FileLogJournal(dir, (e) => errors.push(e));
    expect(again.leftover().entries.map((e) => e.id)).toEqual(['r1']);
    committed();
    j.append(logEntry({ id: 'r2' }));
    const closing = j.durable();
    j.close();
    await closing;
    again.close();
    expect(errors).toEqual([]);
  });

  it('keeps taking batches in one segment until it is full, and deletes a full one once every batch in it is committed', () => {
    const j = new FileLogJournal(dir, (e) => errors.push(e));
    j.append(logEntry({ id: 'r1' }));
    const first = j.seal();
    // A small batch: the same segment goes on.
    expect(first.newSegment).toBe(false);
    expect(readdirSync(dir)).toHaveLength(1);
    first.committed();
    expect(readdirSync(dir)).toHaveLength(1);
    // Fill it past SEGMENT_BYTES over two batches.
    const big = 'x'.repeat(SEGMENT_BYTES / 2 + 1);
    j.append(logEntry({ id: 'r2', errorMessage: big }));
    const second = j.seal();
    expect(second.newSegment).toBe(false);
    j.append(logEntry({ id: 'r3', errorMessage: big }));
    const third = j.seal();
    expect(third.newSegment).toBe(true);
    expect(readdirSync(dir)).toHaveLength(2);
    // The full segment goes only when its last batch is in the store.
    third.committed();
    expect(readdirSync(dir)).toHaveLength(2);
    second.committed();
    expect(readdirSync(dir)).toHaveLength(1);
    // Nothing new: sealing again seals nothing.
    expect(j.seal().newSegment).toBe(false);
    j.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(errors).toEqual([]);
  });
});

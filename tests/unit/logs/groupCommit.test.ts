// The log worker's group commit (logs/groupCommit.ts): writes are held and committed together in
// order, when enough entries are held, when the window closes, or when asked; a write is
// acknowledged only once committed; a group that fails is retried write by write.
import { describe, expect, it } from 'vitest';
import { GroupCommit, GROUP_MAX_ENTRIES, GROUP_WINDOW_MS } from '../../../src/main/engine/logs/groupCommit';
import { FakeClock } from '../../support/fakeClock';

interface W {
  id: string;
  entries: number;
  bad?: boolean;
}

function harness() {
  const clock = new FakeClock();
  const commits: string[][] = [];
  const acks: number[] = [];
  const errors: string[] = [];
  const group = new GroupCommit<W>({
    commit: (writes) => {
      if (writes.some((w) => w.bad)) throw new Error(`bad write among ${writes.map((w) => w.id).join(',')}`);
      commits.push(writes.map((w) => w.id));
    },
    entries: (w) => w.entries,
    ack: (seq) => acks.push(seq),
    error: (m) => errors.push(m),
    clock,
  });
  return { clock, group, commits, acks, errors };
}

describe('group commit of the request-log writes', () => {
  it('holds writes until the window closes, then commits them in one transaction, in order, and acknowledges the last', () => {
    const h = harness();
    h.group.add(1, { id: 'a', entries: 64 });
    h.clock.advance(GROUP_WINDOW_MS / 2);
    h.group.add(2, { id: 'b', entries: 64 });
    h.group.add(3, { id: 'prune', entries: 0 });
    expect(h.commits).toEqual([]);
    expect(h.acks).toEqual([]);
    expect(h.group.size).toBe(3);
    // The window is timed from the first write it holds.
    h.clock.advance(GROUP_WINDOW_MS / 2);
    expect(h.commits).toEqual([['a', 'b', 'prune']]);
    expect(h.acks).toEqual([3]);
    expect(h.group.size).toBe(0);
  });

  it('commits at once when the held entries reach the limit, without waiting for the window', () => {
    const h = harness();
    const per = GROUP_MAX_ENTRIES / 4;
    for (let i = 1; i <= 4; i++) h.group.add(i, { id: `w${i}`, entries: per });
    expect(h.commits).toEqual([['w1', 'w2', 'w3', 'w4']]);
    expect(h.acks).toEqual([4]);
    // The next write starts a window of its own.
    h.clock.advance(GROUP_WINDOW_MS - 1);
    h.group.add(5, { id: 'w5', entries: 1 });
    h.clock.advance(GROUP_WINDOW_MS - 1);
    expect(h.commits).toHaveLength(1);
    h.clock.advance(1);
    expect(h.commits).toEqual([['w1', 'w2', 'w3', 'w4'], ['w5']]);
    expect(h.acks).toEqual([4, 5]);
  });

  it('commits what it holds when asked (a read of the store, close), and does nothing when it holds nothing', () => {
    const h = harness();
    h.group.flush();
    expect(h.commits).toEqual([]);
    expect(h.acks).toEqual([]);
    h.group.add(7, { id: 'x', entries: 3 });
    h.group.flush();
    expect(h.commits).toEqual([['x']]);
    expect(h.acks).toEqual([7]);
    // The window's timer went with the commit.
    h.clock.advance(GROUP_WINDOW_MS);
    expect(h.commits).toEqual([['x']]);
    expect(h.acks).toEqual([7]);
  });

  it('retries a failed group write by write, so one bad write loses only itself, and still acknowledges all', () => {
    const h = harness();
    h.group.add(1, { id: 'a', entries: 1 });
    h.group.add(2, { id: 'bad', entries: 1, bad: true });
    h.group.add(3, { id: 'c', entries: 1 });
    h.group.flush();
    expect(h.commits).toEqual([['a'], ['c']]);
    expect(h.errors).toEqual(['bad write among bad']);
    expect(h.acks).toEqual([3]);
  });

  it('reports a lone failed write once', () => {
    const h = harness();
    h.group.add(1, { id: 'bad', entries: 1, bad: true });
    h.group.flush();
    expect(h.commits).toEqual([]);
    expect(h.errors).toEqual(['bad write among bad']);
    expect(h.acks).toEqual([1]);
  });
});

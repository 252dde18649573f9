// A chaos phase's script: for each key, what it does over time (segments), turned into the
// chaos upstream's plan, and read back by the measurements (which keys were healthy when, and
// which spans were "bad spells" the engine should have acted on).
import { seededRandom, type ChaosPlan, type Fault } from '../support/chaosUpstream';

/** What a key does during a segment: a fault, or `flap` (every other call to the provider fails). */
export type KeyState = Fault | 'flap';

export interface Segment {
  key: string;
  /** ms since the phase began, inclusive. */
  from: number;
  /** ms since the phase began, exclusive. */
  to: number;
  state: KeyState;
}

export interface Spell {
  key: string;
  from: number;
  to: number;
  states: KeyState[];
}

/** A key in these states answers correctly (slow counts: it is slow, not broken). */
export const HEALTHY: ReadonlySet<KeyState> = new Set<KeyState>(['ok', 'slow']);

/**
 * A key in these states fails every call in a way the engine can act on per connection (5xx,
 * transport failure, 429). Stalls are neither healthy nor ejectable: by R-CC-22 a stall records an
 * error but cools nothing, so calls to a stalling key are not counted as wasted; `flap` is a
 * provider-wide fault (the breaker's job), not one key's.
 */
export const EJECTABLE: ReadonlySet<KeyState> = new Set<KeyState>([
  'status_503',
  'status_429',
  'status_429_retry_after',
  'reset',
  'hang',
]);

export class Schedule {
  private readonly byKey = new Map<string, Segment[]>();

  constructor(
    readonly keys: readonly string[],
    readonly durationMs: number,
    segments: readonly Segment[],
  ) {
    for (const k of keys) this.byKey.set(k, []);
    for (const s of segments) this.byKey.get(s.key)!.push(s);
    for (const [k, list] of this.byKey) {
      list.sort((a, b) => a.from - b.from);
      let at = 0;
      for (const s of list) {
        if (s.from !== at) throw new Error(`schedule for ${k} has a gap or overlap at ${at} ms`);
        at = s.to;
      }
      if (at !== durationMs) throw new Error(`schedule for ${k} ends at ${at} ms, not ${durationMs} ms`);
    }
  }

  /** The key's state at t; before 0 a key is healthy (a fresh engine), after the end it keeps its last state. */
  stateAt(key: string, t: number): KeyState {
    if (t < 0) return 'ok';
    const list = this.byKey.get(key)!;
    for (const s of list) if (t < s.to) return s.state;
    return list[list.length - 1]!.state;
  }

  /** True when the key is healthy over the whole of [from, to]. */
  healthyOver(key: string, from: number, to: number): boolean {
    if (!HEALTHY.has(this.stateAt(key, from)) || !HEALTHY.has(this.stateAt(key, to))) return false;
    for (const s of this.byKey.get(key)!) {
      if (s.to <= from || s.from > to) continue;
      if (!HEALTHY.has(s.state)) return false;
    }
    return true;
  }

  /** Some key is healthy over the whole of [from, to]. */
  someHealthyOver(from: number, to: number): boolean {
    return this.keys.some((k) => this.healthyOver(k, from, to));
  }

  /** The maximal span around t during which the key is not healthy, or null when it is healthy at t. */
  badSpanAt(key: string, t: number): { from: number; to: number } | null {
    if (HEALTHY.has(this.stateAt(key, t))) return null;
    const list = this.byKey.get(key)!;
    let i = list.findIndex((s) => t < s.to);
    if (i < 0) i = list.length - 1;
    let from = i;
    while (from > 0 && !HEALTHY.has(list[from - 1]!.state)) from--;
    let to = i;
    while (to < list.length - 1 && !HEALTHY.has(list[to + 1]!.state)) to++;
    return { from: list[from]!.from, to: to === list.length - 1 ? Infinity : list[to]!.to };
  }

  /** Maximal spans during which one key is in ejectable states only. */
  spells(): Spell[] {
    const out: Spell[] = [];
    for (const [key, list] of this.byKey) {
      let cur: Spell | null = null;
      for (const s of list) {
        if (EJECTABLE.has(s.state)) {
          if (cur && cur.to === s.from) {
            cur.to = s.to;
            if (!cur.states.includes(s.state)) cur.states.push(s.state);
          } else {
            cur = { key, from: s.from, to: s.to, states: [s.state] };
            out.push(cur);
          }
        } else cur = null;
      }
    }
    return out.sort((a, b) => a.from - b.from || a.key.localeCompare(b.key));
  }

  /** The chaos upstream's plan: the key's state at the call's arrival; `flap` fails odd calls. */
  plan(): ChaosPlan {
    return (c) => {
      const s = this.stateAt(c.key, c.t);
      if (s === 'flap') return c.seq % 2 === 1 ? 'status_503' : 'ok';
      return s;
    };
  }

  describe(): string {
    return [...this.byKey]
      .map(([k, list]) => `${k}: ${list.map((s) => `${s.state}@${s.from}-${s.to}`).join(' ')}`)
      .join('\n');
  }
}

/** One state for the whole phase, or a list of [untilMs, state] steps. */
export function steps(key: string, durationMs: number, ...parts: [number, KeyState][]): Segment[] {
  const out: Segment[] = [];
  let from = 0;
  for (const [until, state] of parts) {
    const to = Math.min(until, durationMs);
    if (to > from) out.push({ key, from, to, state });
    from = to;
  }
  if (from < durationMs) throw new Error(`steps for ${key} stop at ${from} ms`);
  return out;
}

/**
 * Phase (c): random faults in slots of `slotMs`, with one key at every moment that has been
 * healthy for at least `healthyLeadMs` (so the engine has had time to forget anything it held
 * against that key). That healthy "anchor" changes every `anchorSlots` slots, and the next anchor
 * is held healthy for `healthyLeadMs` before it takes over; a held key still gets random latency
 * (`slow`). The other keys get a fault in `faultShare` of their slots. Over a run of two or more
 * anchor terms every key gets real faults.
 */
export function randomFaults(o: {
  keys: readonly string[];
  durationMs: number;
  slotMs: number;
  anchorSlots: number;
  healthyLeadMs: number;
  faultShare: number;
  faults: readonly Fault[];
  seed: number;
}): Schedule {
  const rnd = seededRandom(o.seed);
  const slots = Math.ceil(o.durationMs / o.slotMs);
  const lead = Math.ceil(o.healthyLeadMs / o.slotMs);
  const anchors: number[] = [];
  let a = Math.floor(rnd() * o.keys.length);
  for (let j = 0; j * o.anchorSlots < slots; j++) {
    anchors.push(a);
    a = (a + 1 + Math.floor(rnd() * (o.keys.length - 1))) % o.keys.length;
  }
  const draw = dealer(o.faults, rnd);
  const segments: Segment[] = [];
  for (let i = 0; i < slots; i++) {
    const from = i * o.slotMs;
    const to = Math.min(o.durationMs, from + o.slotMs);
    const term = Math.floor(i / o.anchorSlots);
    const held = new Set<number>([anchors[term]!]);
    // The next anchor (if its term starts within the phase) is healthy for `lead` slots first.
    const nextTerm = (term + 1) * o.anchorSlots;
    if (nextTerm < slots && nextTerm - i <= lead) held.add(anchors[term + 1]!);
    o.keys.forEach((key, k) => {
      let state: KeyState;
      if (held.has(k) || rnd() >= o.faultShare) state = rnd() < 0.3 ? 'slow' : 'ok';
      else state = draw();
      segments.push({ key, from, to, state });
    });
  }
  return new Schedule(o.keys, o.durationMs, mergeRuns(segments));
}

/** Faults dealt from a shuffled deck, reshuffled when empty, so a short run still gets every kind. */
function dealer(faults: readonly Fault[], rnd: () => number): () => Fault {
  let deck: Fault[] = [];
  return () => {
    if (deck.length === 0) {
      deck = [...faults];
      for (let i = deck.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [deck[i], deck[j]] = [deck[j]!, deck[i]!];
      }
    }
    return deck.pop()!;
  };
}

/**
 * The randomised suite's schedule (issue 19): faults that move between keys. At each rotation
 * (every `periodMs`, give or take a fifth) one or two keys that are healthy at that moment turn
 * bad, each in a fault dealt from `faults` for a random `spellRange` x `periodMs`; a spell is
 * cut short where it would leave no key healthy, so at every moment at least one key answers
 * normally. Everything else is `ok`. The same seed gives the same schedule.
 */
export function rotatingFaults(o: {
  keys: readonly string[];
  durationMs: number;
  periodMs: number;
  /** Shortest and longest spell, in periods. */
  spellRange: readonly [number, number];
  faults: readonly Fault[];
  seed: number;
}): Schedule {
  const RES = 10; // ms per grid cell
  const MIN_SPELL_CELLS = 10;
  const rnd = seededRandom(o.seed);
  const draw = dealer(o.faults, rnd);
  const cells = Math.ceil(o.durationMs / RES);
  // What each key does in each cell; null is healthy.
  const grid: (Fault | null)[][] = o.keys.map(() => new Array<Fault | null>(cells).fill(null));
  const allOthersBad = (k: number, i: number) => grid.every((row, j) => j === k || row[i] !== null);
  let t = o.periodMs * (0.2 + 0.4 * rnd());
  while (t < o.durationMs) {
    const i0 = Math.floor(t / RES);
    const healthy = o.keys.map((_, k) => k).filter((k) => grid[k]![i0] === null);
    const turning = rnd() < 0.5 ? 1 : 2;
    for (let n = 0; n < turning && healthy.length > 1; n++) {
      const k = healthy.splice(Math.floor(rnd() * healthy.length), 1)[0]!;
      const fault = draw();
      const span = o.periodMs * (o.spellRange[0] + rnd() * (o.spellRange[1] - o.spellRange[0]));
      let i1 = Math.min(cells, Math.ceil((t + span) / RES));
      for (let i = i0; i < i1; i++) {
        if (allOthersBad(k, i)) {
          i1 = i;
          break;
        }
      }
      if (i1 - i0 < MIN_SPELL_CELLS) continue;
      for (let i = i0; i < i1; i++) grid[k]![i] = fault;
    }
    t += o.periodMs * (0.8 + 0.4 * rnd());
  }
  const segments: Segment[] = [];
  o.keys.forEach((key, k) => {
    const row = grid[k]!;
    for (let i = 0; i < cells; ) {
      let j = i;
      while (j < cells && row[j] === row[i]) j++;
      segments.push({ key, from: i * RES, to: Math.min(o.durationMs, j * RES), state: row[i] ?? 'ok' });
      i = j;
    }
  });
  return new Schedule(o.keys, o.durationMs, segments);
}

function mergeRuns(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  const last = new Map<string, Segment>();
  for (const s of segments) {
    const prev = last.get(s.key);
    if (prev && prev.state === s.state && prev.to === s.from) {
      prev.to = s.to;
      continue;
    }
    const copy = { ...s };
    out.push(copy);
    last.set(s.key, copy);
  }
  return out;
}

// The large members of each client's recent request bodies, for the skeleton scan to skip what it
// checked on an earlier turn (proxy/jsonSkeleton.ts MemberRecall; docs/decisions/lean-25-member-memory.md).
//
// Kept per client key and protocol, so one client's requests never read as faster because of what
// another sent. Up to VALUES_PER_KEY values per member key (an agent's main conversation and its
// subagents' interleave under one key), most recent first.
//
// The values' bytes are copied into one buffer of MEMORY_MAX_BYTES, allocated once and written as a
// ring: a new value goes after the last one (or back at the start), and the values it overwrites
// are forgotten first. A Buffer per value would be memory outside V8's heap allocated on every
// request and kept across young collections, which V8 counts toward starting a full one
// (docs/decisions/lean-25-gc.md); views of one buffer are not.
import type { InboundProtocol } from '../../../shared/model';
import type { MemberRecall, RememberedValue } from './jsonSkeleton';

/** Values kept per member key and client. */
export const VALUES_PER_KEY = 3;
/** The ring's size: every remembered byte of the process. */
export const MEMORY_MAX_BYTES = 2 * 1024 * 1024;
/** Clients (key and protocol) remembered; past it the memory starts over. */
export const MAX_CLIENTS = 64;

/** What the engine remembers per client is kept per client key and inbound protocol (also parsedCall.ts BodyReads). */
export function clientScope(protocol: InboundProtocol, clientKeyId: string | null): string {
  return `${protocol} ${clientKeyId ?? ''}`;
}

interface Slot {
  value: RememberedValue;
  /** Where its bytes lie in the ring. */
  from: number;
  to: number;
}

class ClientMembers implements MemberRecall {
  readonly slots = new Map<string, Slot[]>();

  constructor(
    private readonly memory: MemberMemory,
    readonly id: string,
  ) {}

  recall(key: string): readonly RememberedValue[] | undefined {
    const list = this.slots.get(key);
    return list && list.length > 0 ? list.map((s) => s.value) : undefined;
  }

  keep(key: string, value: RememberedValue, reused: boolean): void {
    // A client the memory started over without (its scan was under way): nothing to keep.
    if (!this.memory.holds(this)) return;
    let list = this.slots.get(key);
    if (!list) this.slots.set(key, (list = []));
    if (reused) {
      // Most recent first.
      const at = list.findIndex((s) => s.value === value);
      if (at > 0) list.unshift(...list.splice(at, 1));
      return;
    }
    const slot = this.memory.store(value);
    if (!slot) return;
    list.unshift(slot);
    if (list.length > VALUES_PER_KEY) list.length = VALUES_PER_KEY;
  }

  /** Forgets the values whose bytes lie in [from, to) of the ring. */
  forget(from: number, to: number): void {
    for (const [key, list] of this.slots) {
      const left = list.filter((s) => s.to <= from || s.from >= to);
      if (left.length !== list.length) this.slots.set(key, left);
    }
  }
}

export class MemberMemory {
  private readonly clients = new Map<string, ClientMembers>();
  private ring: Buffer | null = null;
  /** Where the next value's bytes go. */
  private at = 0;

  constructor(
    private readonly size = MEMORY_MAX_BYTES,
    private readonly maxClients = MAX_CLIENTS,
  ) {}

  /** What the scan of this client's next large body on `protocol` may reuse, and keeps. */
  of(protocol: InboundProtocol, clientKeyId: string | null): MemberRecall {
    const k = clientScope(protocol, clientKeyId);
    let c = this.clients.get(k);
    if (!c) {
      if (this.clients.size >= this.maxClients) this.clients.clear();
      this.clients.set(k, (c = new ClientMembers(this, k)));
    }
    return c;
  }

  holds(c: ClientMembers): boolean {
    return this.clients.get(c.id) === c;
  }

  /** A value's bytes copied into the ring (the values they overwrite forgotten); null: too large to keep. */
  store(value: RememberedValue): Slot | null {
    const n = value.bytes.length;
    if (n > this.size / 2) return null;
    this.ring ??= Buffer.allocUnsafeSlow(this.size);
    if (this.at + n > this.size) this.at = 0;
    const from = this.at;
    const to = from + n;
    for (const c of this.clients.values()) c.forget(from, to);
    value.bytes.copy(this.ring, from);
    this.at = to;
    return { value: { ...value, bytes: this.ring.subarray(from, to) }, from, to };
  }

  /** Bytes of the values remembered now (for tests). */
  get heldBytes(): number {
    let n = 0;
    for (const c of this.clients.values()) for (const list of c.slots.values()) for (const s of list) n += s.to - s.from;
    return n;
  }
}

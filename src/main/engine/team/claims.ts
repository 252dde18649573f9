// Claims the team makes exactly once (issue 26): a breaker's half-open probe, an ejected key's test
// call, a Claude account's limit reset or token refresh. A claim is a Redis key set only if absent
// (SET NX PX), held by an owner id for a bounded time, and released only by its holder (a script
// compares before it deletes). While the link is down a claim is decided locally ('local'): the
// caller applies its own single-process rule, which is what every instance would do alone.
import type { RedisLink } from './redisLink';

export type ClaimResult = 'granted' | 'held' | 'local';

const RELEASE_IF_HOLDER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export class TeamClaims {
  constructor(
    private readonly link: RedisLink,
    private readonly prefix: string,
  ) {}

  private key(name: string): string {
    return `${this.prefix}claim:${name}`;
  }

  /** Claims `name` for `owner` for `ttlMs` (re-claiming one's own claim renews it). */
  async claim(name: string, owner: string, ttlMs: number): Promise<ClaimResult> {
    if (!this.link.up) return 'local';
    try {
      const key = this.key(name);
      const set = await this.link.client.set(key, owner, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
      if (set === 'OK') return 'granted';
      const holder = await this.link.client.get(key);
      if (holder === owner) {
        await this.link.client.pexpire(key, Math.max(1, Math.ceil(ttlMs)));
        return 'granted';
      }
      return holder === null ? this.claim(name, owner, ttlMs) : 'held';
    } catch (err) {
      this.link.failed(err);
      return 'local';
    }
  }

  /** Gives a claim back (only its holder's release counts). Never throws, never waits long. */
  async release(name: string, owner: string): Promise<void> {
    if (!this.link.up) return;
    try {
      await this.link.client.eval(RELEASE_IF_HOLDER, 1, this.key(name), owner);
    } catch (err) {
      this.link.failed(err);
    }
  }

  /** Who holds `name` now (null: nobody, or the link is down). */
  async holder(name: string): Promise<string | null> {
    if (!this.link.up) return null;
    try {
      return await this.link.client.get(this.key(name));
    } catch (err) {
      this.link.failed(err);
      return null;
    }
  }
}

// Client keys, which agents send to the proxy: list, create (the new key is shown in full),
// reveal for copy-paste, revoke. Keys are not pushed; the list is re-read after each change.
import { createStore } from 'zustand/vanilla';
import type { ClientKeyScope, ClientKeyView } from '../../shared/model';
import { pendingActions, reportError, reportLoadError, rethrow, type StoreContext } from './context';

export interface KeysState {
  list: ClientKeyView[];
  loaded: boolean;
  /** Full key values the user asked to see, by id. */
  revealed: Record<string, string>;
  pending: Record<string, boolean>;
  load(): Promise<void>;
  /** Creates a key; throws so the form can show the error by its field. */
  create(name: string): Promise<{ key: ClientKeyView; secret: string }>;
  reveal(id: string): Promise<string | null>;
  hide(id: string): void;
  revoke(id: string): Promise<boolean>;
  /** Changes a key's scopes and lease pool; throws so the dialog can show the error by its field. */
  setAccess(id: string, access: { scopes: ClientKeyScope[]; allowedConnections: string[] }): Promise<ClientKeyView>;
}

export const activeKeys = (list: ClientKeyView[]) => list.filter((k) => k.revokedAt === null);

export function createKeysStore(ctx: StoreContext) {
  return createStore<KeysState>()((set, get) => {
    const { setPending, run } = pendingActions(ctx, set);
    return {
      list: [],
      loaded: false,
      revealed: {},
      pending: {},
      async load() {
        try {
          const list = await ctx.bridge.listClientKeys();
          set({ list, loaded: true });
        } catch (err) {
          reportLoadError(ctx, 'keys', err, 'Could not load client keys');
        }
      },
      async create(name) {
        const r = await rethrow(ctx, () => ctx.bridge.createClientKey({ name }));
        set((s) => ({ list: [...s.list.filter((k) => k.id !== r.key.id), r.key], revealed: { ...s.revealed, [r.key.id]: r.secret } }));
        ctx.toasts.getState().push('success', `Created key ${r.key.name}`);
        return r;
      },
      async reveal(id) {
        const known = get().revealed[id];
        if (known) return known;
        setPending(id, true);
        try {
          const { secret } = await ctx.bridge.revealClientKey({ id });
          set((s) => ({ revealed: { ...s.revealed, [id]: secret } }));
          return secret;
        } catch (err) {
          reportError(ctx, err, 'Could not reveal the key');
          return null;
        } finally {
          setPending(id, false);
        }
      },
      hide(id) {
        set((s) => {
          const revealed = { ...s.revealed };
          delete revealed[id];
          return { revealed };
        });
      },
      async setAccess(id, access) {
        const updated = await rethrow(ctx, () => ctx.bridge.updateClientKey({ id, patch: access }));
        set((s) => ({ list: s.list.map((k) => (k.id === id ? updated : k)) }));
        ctx.toasts.getState().push(
          'success',
          access.scopes.includes('lease:exclusive') ? `${updated.name} may lease ${access.allowedConnections.length} connection${access.allowedConnections.length === 1 ? '' : 's'}` : `${updated.name} takes no leases`,
        );
        return updated;
      },
      revoke(id) {
        const name = get().list.find((k) => k.id === id)?.name ?? 'key';
        return run(id, `Could not revoke ${name}`, async () => {
          await ctx.bridge.revokeClientKey({ id });
          ctx.toasts.getState().push('success', `Revoked ${name}; agents using it are refused from now on`);
          get().hide(id);
          await get().load();
        });
      },
    };
  });
}

export type KeysStore = ReturnType<typeof createKeysStore>;

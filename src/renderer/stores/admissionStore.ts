// Request-queue state per connection (in flight, queued, protection and its source), pushed by
// the engine.
import { createStore } from 'zustand/vanilla';
import type { AdmissionView } from '../../shared/model';
import { reportLoadError, Revision, type StoreContext } from './context';

export interface AdmissionState {
  byConnection: Record<string, AdmissionView>;
  loaded: boolean;
  apply(list: AdmissionView[]): void;
  load(): Promise<void>;
}

const index = (list: AdmissionView[]) => Object.fromEntries(list.map((a) => [a.connectionId, a]));

export function createAdmissionStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<AdmissionState>()((set) => ({
    byConnection: {},
    loaded: false,
    apply(list) {
      rev.bump();
      set({ byConnection: index(list), loaded: true });
    },
    async load() {
      try {
        await rev.guard(
          () => ctx.bridge.getAdmission(),
          (list) => set({ byConnection: index(list), loaded: true }),
        );
      } catch (err) {
        reportLoadError(ctx, 'admission', err, 'Could not load queue state');
      }
    },
  }));
}

export type AdmissionStore = ReturnType<typeof createAdmissionStore>;

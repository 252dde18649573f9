// A small hash router (#/connections): works the same from file:// in Electron and from the
// headless shell in a browser, and keeps the back button meaningful.
import { useEffect, useState } from 'react';

export const PAGES = ['agent', 'connections', 'combos', 'cooldowns', 'breakers', 'errorRules', 'settings', 'prices', 'logs', 'sessions', 'leases', 'app'] as const;
export type PageId = (typeof PAGES)[number];

export function pageFromHash(hash: string): PageId {
  const id = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (PAGES as readonly string[]).includes(id) ? (id as PageId) : 'agent';
}

export function useRoute(): PageId {
  const [page, setPage] = useState<PageId>(() => pageFromHash(window.location.hash));
  useEffect(() => {
    const on = () => setPage(pageFromHash(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return page;
}

export const hrefOf = (p: PageId) => `#/${p}`;

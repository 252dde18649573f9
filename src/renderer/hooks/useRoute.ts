// A small hash router (#/connections): works the same from file:// in Electron and from the
// headless shell in a browser, and keeps the back button meaningful. An address that names no
// page lands on the landing page the caller decides (the Overview once a connection exists, agent
// setup before that); the address is then rewritten to name it, so the page stays put when the
// first connection is added.
import { useEffect, useState } from 'react';

export const PAGES = ['overview', 'agent', 'connections', 'combos', 'cooldowns', 'breakers', 'errorRules', 'settings', 'prices', 'logs', 'sessions', 'leases', 'team', 'app'] as const;
export type PageId = (typeof PAGES)[number];

/** The page an address names; null when it names none (the landing page decides). */
export function pageFromHash(hash: string): PageId | null {
  const id = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (PAGES as readonly string[]).includes(id) ? (id as PageId) : null;
}

/** Where an address without a page lands: null until the connections are known. */
export function landingPage(connections: { loaded: boolean; count: number; failed: boolean }): PageId | null {
  if (connections.count > 0) return 'overview';
  if (connections.loaded || connections.failed) return 'agent';
  return null;
}

/** The current page; null while the address names none and `landing` is not known yet. */
export function useRoute(landing: PageId | null): PageId | null {
  const [named, setNamed] = useState<PageId | null>(() => pageFromHash(window.location.hash));
  useEffect(() => {
    const on = () => setNamed(pageFromHash(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    if (named !== null || landing === null) return;
    const { pathname, search } = window.location;
    window.history.replaceState(window.history.state, '', `${pathname}${search}${hrefOf(landing)}`);
    // replaceState fires no hashchange: announce it, so the page named now stays put.
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  }, [named, landing]);
  return named ?? landing;
}

export const hrefOf = (p: PageId) => `#/${p}`;

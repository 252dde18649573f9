// Settings, grouped into the sections of shared/settings/sections.ts: a sticky index of the
// sections, each section collapsible (closed at first, so the page is a list of what can be
// decided rather than every field at once), and a search over the plain labels and descriptions
// (then the technical names) that opens every section with a match. #/settings/<section> opens
// that section. Every row says where its value comes from; changes are saved one setting at a time.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Badge, EmptyState, PageHeader } from '../../components/ui';
import { LoadState } from '../../components/LoadState';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { filterSections, sectionById, SETTING_SECTIONS } from '../../../shared/settings/sections';
import type { SettingView } from '../../../shared/model';
import { SettingRow } from './SettingRow';
import './settings.css';

/** The section named in the address (#/settings/streams), if any. */
function sectionFromHash(hash: string): string | null {
  const m = /^#\/?settings\/([A-Za-z0-9_-]+)/.exec(hash);
  return m && sectionById(m[1]!) ? m[1]! : null;
}

const countChanged = (settings: readonly SettingView[]) => settings.filter((s) => s.source !== 'default').length;

export function SettingsPage() {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const teamOwner = useSel(d.team, (s) => (s.view?.managed.settings.length ? s.view.managed.owner : null));
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState<ReadonlySet<string>>(() => {
    const first = typeof window === 'undefined' ? null : sectionFromHash(window.location.hash);
    return new Set(first ? [first] : []);
  });
  const q = query.trim();
  const all = useMemo(() => view?.settings ?? [], [view]);
  const shown = useMemo(() => filterSections(all, q), [all, q]);
  const matches = shown.reduce((n, g) => n + g.parts.reduce((m, p) => m + p.settings.length, 0), 0);

  useEffect(() => {
    const on = () => {
      const id = sectionFromHash(window.location.hash);
      if (id) setOpen((o) => new Set([...o, id]));
    };
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);

  // A section opened from the address is scrolled to once the settings are there (once).
  const scrolled = useRef(false);
  useEffect(() => {
    if (scrolled.current || !view) return;
    scrolled.current = true;
    const id = sectionFromHash(window.location.hash);
    if (id) document.getElementById(`section-${id}`)?.scrollIntoView({ block: 'start' });
  }, [view]);

  const toggle = (id: string) =>
    setOpen((o) => {
      const next = new Set(o);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const goTo = (id: string) => {
    setOpen((o) => new Set([...o, id]));
    window.history.replaceState(null, '', `#/settings/${id}`);
    // After the section has rendered open.
    requestAnimationFrame(() => document.getElementById(`section-${id}`)?.scrollIntoView({ block: 'start', behavior: 'smooth' }));
  };

  const bySource = (src: SettingView['source']) => all.filter((s) => s.source === src).length;

  return (
    <div className="page">
      <PageHeader
        title="Resilience settings"
        description="Grouped by what they decide. Each value says where it comes from: the built-in default, a value saved here, an environment variable or a command-line option. A value saved here wins over an environment variable, except where a row says otherwise; a command-line option wins over both for that run."
        actions={
          <input
            type="search"
            className="search settings-search"
            placeholder="Search settings"
            aria-label="Search settings"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
          />
        }
      />
      {!view ? (
        <LoadState topics="settings" what="settings" />
      ) : (
        <>
          <div className="summary-row" aria-label="Where the values come from">
            <Badge tone="accent">{bySource('persisted')} saved here</Badge>
            <Badge tone="info">{bySource('env')} from the environment</Badge>
            {bySource('cli') > 0 && <Badge tone="warn">{bySource('cli')} from the command line</Badge>}
            <Badge tone="neutral">{bySource('default')} default</Badge>
          </div>
          {teamOwner && (
            <p className="callout callout-info" data-testid="settings-managed">
              Managed by team (published by {teamOwner}): these settings are read-only here and change when {teamOwner} changes them. This workstation&apos;s proxy
              port, how long it keeps its request log and the notifications muted here stay its own.
            </p>
          )}
          <div className="settings-layout">
            <nav className="settings-index" aria-label="Setting sections">
              <ul>
                {SETTING_SECTIONS.map((sec) => {
                  const hit = shown.find((g) => g.section.id === sec.id);
                  const n = hit ? hit.parts.reduce((m, p) => m + p.settings.length, 0) : 0;
                  return (
                    <li key={sec.id}>
                      <a
                        href={`#/settings/${sec.id}`}
                        className={`${open.has(sec.id) || (q && n) ? 'is-open' : ''}${q && !n ? ' is-empty' : ''}`}
                        aria-disabled={q && !n ? true : undefined}
                        onClick={(e) => {
                          e.preventDefault();
                          if (q && !n) return;
                          goTo(sec.id);
                        }}
                      >
                        <span>{sec.title}</span>
                        <span className="settings-index-count">{n}</span>
                      </a>
                    </li>
                  );
                })}
              </ul>
              {!q && (
                <div className="settings-index-actions">
                  <button type="button" className="btn btn-sm btn-ghost" onClick={() => setOpen(new Set(SETTING_SECTIONS.map((s) => s.id)))}>
                    Open all
                  </button>
                  <button type="button" className="btn btn-sm btn-ghost" onClick={() => setOpen(new Set())}>
                    Close all
                  </button>
                </div>
              )}
            </nav>
            <div className="settings-sections">
              {q && shown.length > 0 && (
                <p className="hint" role="status">
                  {matches === 1 ? '1 setting matches' : `${matches} settings match`} “{q}”.
                </p>
              )}
              {shown.length === 0 ? (
                <EmptyState
                  title="No setting matches"
                  action={
                    <button type="button" className="btn btn-sm" onClick={() => setQuery('')}>
                      Clear the search
                    </button>
                  }
                >
                  Nothing in the labels, descriptions or technical names contains “{q}”. Try another word.
                </EmptyState>
              ) : (
                shown.map(({ section, parts }) => {
                  const isOpen = !!q || open.has(section.id);
                  const settings = parts.flatMap((p) => p.settings.map((x) => x.setting));
                  const changed = countChanged(settings);
                  return (
                    <section key={section.id} id={`section-${section.id}`} className="card settings-section" aria-labelledby={`section-${section.id}-title`} data-section={section.id}>
                      <h2 className="settings-section-heading" id={`section-${section.id}-title`}>
                        <button
                          type="button"
                          className="settings-section-toggle"
                          aria-expanded={isOpen}
                          aria-controls={`section-${section.id}-body`}
                          disabled={!!q}
                          onClick={() => toggle(section.id)}
                        >
                          <span className="settings-chevron" aria-hidden="true">
                            {isOpen ? '▾' : '▸'}
                          </span>
                          <span className="settings-section-title">{section.title}</span>
                        </button>
                      </h2>
                      <p className="card-description settings-section-summary">
                        {section.summary}{' '}
                        <span className="settings-section-count">
                          {settings.length === 1 ? '1 setting' : `${settings.length} settings`}
                          {changed > 0 ? `, ${changed} not at the default` : ''}
                        </span>
                      </p>
                      {isOpen && (
                        <div id={`section-${section.id}-body`} className="settings-section-body">
                          {parts.map((part, i) => (
                            <div key={part.title ?? i} className="settings-part">
                              {part.title && <h3 className="settings-part-title">{part.title}</h3>}
                              <div className="setting-list">
                                {part.settings.map(({ setting, match }) => (
                                  <SettingRow key={setting.key} setting={setting} technicalMatch={match === 'technical'} />
                                ))}
                              </div>
                            </div>
                          ))}
                        </div>
                      )}
                    </section>
                  );
                })
              )}
            </div>
          </div>
        </>
      )}
    </div>
  );
}

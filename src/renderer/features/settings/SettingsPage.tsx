// Resilience settings: every setting, grouped, with its value, source, range and unit. Changes
// are saved one setting at a time; a saved value can be reset so env or default applies again.
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { Badge, Card, EmptyState, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { SETTING_GROUPS } from '../../../shared/settings';
import { SettingRow } from './SettingRow';

export function SettingsPage() {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const [filter, setFilter] = useState('');
  const q = filter.trim().toLowerCase();
  const settings = (view?.settings ?? []).filter(
    (s) => !q || s.label.toLowerCase().includes(q) || s.key.toLowerCase().includes(q) || s.description.toLowerCase().includes(q) || s.env.some((e) => e.toLowerCase().includes(q)),
  );
  const saved = (view?.settings ?? []).filter((s) => s.source === 'persisted').length;
  const fromEnv = (view?.settings ?? []).filter((s) => s.source === 'env').length;

  return (
    <div className="page">
      <PageHeader
        title="Resilience settings"
        description="Every setting with where its value comes from: the built-in default, an environment variable, or a value saved here. A saved value wins over the environment (except where noted)."
        actions={
          <input
            type="search"
            className="search"
            placeholder="Filter settings"
            aria-label="Filter settings"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
        }
      />
      {view && (
        <div className="summary-row">
          <Badge tone="accent">{saved} saved</Badge>
          <Badge tone="info">{fromEnv} from env</Badge>
          <Badge tone="neutral">{view.settings.length - saved - fromEnv} default</Badge>
        </div>
      )}
      {!view ? (
        <LoadState topics="settings" what="settings" />
      ) : settings.length === 0 ? (
        <EmptyState title="No setting matches">Try another word, or clear the filter.</EmptyState>
      ) : (
        <>
          {!q && (
            <nav className="toc" aria-label="Setting groups">
              {SETTING_GROUPS.filter((g) => settings.some((s) => s.group === g.id)).map((g) => (
                <a key={g.id} href={`#/settings`} onClick={(e) => {
                  e.preventDefault();
                  document.getElementById(`group-${g.id}`)?.scrollIntoView({ behavior: 'smooth', block: 'start' });
                }}>
                  {g.label}
                </a>
              ))}
            </nav>
          )}
          {SETTING_GROUPS.map((g) => {
            const rows = settings.filter((s) => s.group === g.id);
            if (!rows.length) return null;
            return (
              <div key={g.id} id={`group-${g.id}`} className="group-anchor">
                <Card title={g.label}>
                  <div className="setting-list">
                    {rows.map((s) => (
                      <SettingRow key={s.key} setting={s} />
                    ))}
                  </div>
                </Card>
              </div>
            );
          })}
        </>
      )}
    </div>
  );
}

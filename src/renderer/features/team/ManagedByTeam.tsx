// "Managed by team (published by …)": on a follower, the mark on a connection, combo, mapping or
// setting that came from the team's publisher (read-only here; it is changed where it is published).
import { Badge } from '../../components/ui';
import { hrefOf } from '../../hooks/useRoute';

export function ManagedByTeam({ owner }: { owner: string }) {
  return (
    <a href={hrefOf('team')} className="plain-link team-managed" data-testid="managed-by-team" title={`Change it on ${owner}'s Switchyard`}>
      <Badge tone="info">Managed by team (published by {owner})</Badge>
    </a>
  );
}

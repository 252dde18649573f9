// The Claude account settings, read once into one plain object the modules take (so a test can
// build it by hand and point every endpoint at the fake server).
import type { SettingValues } from '../../../shared/settings';

export interface ClaudeOAuthConfig {
  authorizeUrl: string;
  tokenUrl: string;
  /** Redirect URI for the pasted-code flow (the provider's page shows `code#state`). */
  pasteRedirectUri: string;
  clientId: string;
  /** Space-separated. */
  scopes: string;
  /** Origin of usage / profile / reset calls; '' means the connection's own base URL. */
  apiBaseUrl: string;
  /** Refresh an access token this long before it expires. */
  refreshMarginMs: number;
}

export function claudeConfigFrom(v: SettingValues): ClaudeOAuthConfig {
  return {
    authorizeUrl: v['claude.authorizeUrl'],
    tokenUrl: v['claude.tokenUrl'],
    pasteRedirectUri: v['claude.pasteRedirectUri'],
    clientId: v['claude.clientId'],
    scopes: v['claude.scopes'],
    apiBaseUrl: v['claude.apiBaseUrl'],
    refreshMarginMs: v['claude.refreshMarginMs'],
  };
}

/** Where the account API lives for one connection: the setting, else the connection's base URL (without /v1). */
export function accountApiBase(cfg: Pick<ClaudeOAuthConfig, 'apiBaseUrl'>, connectionBaseUrl: string): string {
  const base = (cfg.apiBaseUrl || connectionBaseUrl).replace(/\/+$/, '');
  return base.endsWith('/v1') ? base.slice(0, -3) : base;
}

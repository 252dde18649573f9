// Claude accounts store: pushed account views win over an older first read, sign-ins this
// dashboard started follow their claudeLogin push (others are ignored), the browser is opened only
// when the engine did not open it, and usage is read only on demand.
import { describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import type { ClaudeAccountView, ClaudeLoginStart } from '../../../src/shared/model';
import { connection } from './builders';
import { deferred, testDashboard } from './fakeBridge';

const account = (p: Partial<ClaudeAccountView> = {}): ClaudeAccountView => ({
  connectionId: 'c1',
  token: { expiresAt: 2_000_000, status: 'valid', message: null, lastRefreshAt: null, retryAt: null, canRefresh: true },
  subscriptionType: 'max',
  usage: null,
  lane: { state: 'idle', until: null, slowStatus: null, blockedBy: null, lastEnd: null },
  reset: null,
  ...p,
});

const start = (p: Partial<ClaudeLoginStart> = {}): ClaudeLoginStart => ({
  loginId: 'L1',
  authorizeUrl: 'https://claude.example/oauth/authorize?x=1',
  redirectUri: 'http://localhost:5000/callback',
  mode: 'loopback',
  expiresAt: 1_600_000,
  opened: false,
  ...p,
});

describe('claude store', () => {
  it('loads the accounts once and applies pushes; a read that finishes after a push is dropped', async () => {
    const t = testDashboard();
    const read = deferred<{ now: number; accounts: ClaudeAccountView[] }>();
    t.bridge.listClaudeAccounts.mockReturnValue(read.promise);
    const started = t.dash.start();
    t.bridge.emit('claude', { now: 1_000_500, accounts: [account({ subscriptionType: 'pro' })] });
    read.resolve({ now: 1_000_000, accounts: [account()] });
    await started;
    expect(t.dash.claude.getState().byConnection.c1!.subscriptionType).toBe('pro');
    expect(t.bridge.listClaudeAccounts).toHaveBeenCalledTimes(1);
    expect(t.bridge.refreshClaudeUsage).not.toHaveBeenCalled();
  });

  it('startLogin opens the sign-in page only when the engine did not, and follows its own claudeLogin push', async () => {
    const t = testDashboard();
    await t.dash.start();
    const open = vi.fn();
    t.bridge.startClaudeLogin.mockResolvedValueOnce(start());
    await t.dash.claude.getState().startLogin({ name: 'Work' }, open);
    expect(t.bridge.startClaudeLogin).toHaveBeenCalledWith({ name: 'Work' });
    expect(open).toHaveBeenCalledWith('https://claude.example/oauth/authorize?x=1');
    t.bridge.startClaudeLogin.mockResolvedValueOnce(start({ loginId: 'L2', opened: true }));
    await t.dash.claude.getState().startLogin({}, open);
    expect(open).toHaveBeenCalledTimes(1);

    t.bridge.emit('claudeLogin', { loginId: 'someone-else', status: 'done', connectionId: 'cx', error: null });
    t.bridge.emit('claudeLogin', { loginId: 'L1', status: 'done', connectionId: 'c9', error: null });
    const logins = t.dash.claude.getState().logins;
    expect(Object.keys(logins).sort()).toEqual(['L1', 'L2']);
    expect(logins.L1).toMatchObject({ status: 'done', connectionId: 'c9' });
    expect(logins.L2!.status).toBe('pending');
  });

  it('a refused code is thrown for the form (no toast); a good one finishes the sign-in', async () => {
    const t = testDashboard();
    await t.dash.start();
    t.bridge.startClaudeLogin.mockResolvedValue(start({ mode: 'paste' }));
    await t.dash.claude.getState().startLogin({ mode: 'paste' });
    t.bridge.completeClaudeLogin.mockRejectedValueOnce(new BridgeError('token_invalid_grant', 'Claude refused the sign-in code', 'code', 400));
    await expect(t.dash.claude.getState().completeLogin('L1', 'bad#x')).rejects.toMatchObject({ field: 'code' });
    expect(t.dash.toasts.getState().items).toHaveLength(0);
    t.bridge.completeClaudeLogin.mockResolvedValueOnce(connection({ id: 'c7', kind: 'claude-subscription' }));
    await t.dash.claude.getState().completeLogin('L1', 'good#x');
    expect(t.dash.claude.getState().logins.L1).toMatchObject({ status: 'done', connectionId: 'c7' });
  });

  it('cancelLogin forgets the sign-in and tells the engine', async () => {
    const t = testDashboard();
    await t.dash.start();
    t.bridge.startClaudeLogin.mockResolvedValue(start());
    t.bridge.cancelClaudeLogin.mockResolvedValue({ cancelled: true });
    await t.dash.claude.getState().startLogin({});
    await t.dash.claude.getState().cancelLogin('L1');
    expect(t.bridge.cancelClaudeLogin).toHaveBeenCalledWith({ loginId: 'L1' });
    expect(t.dash.claude.getState().logins).toEqual({});
  });

  it('refreshUsage reads one account on demand and marks it while running; an error is a toast', async () => {
    const t = testDashboard();
    await t.dash.start();
    const answer = deferred<{ now: number; accounts: ClaudeAccountView[] }>();
    t.bridge.refreshClaudeUsage.mockReturnValueOnce(answer.promise);
    const p = t.dash.claude.getState().refreshUsage('c1');
    expect(t.dash.claude.getState().refreshing.c1).toBe(true);
    answer.resolve({ now: 1_000_100, accounts: [account({ usage: { fiveHour: null, sevenDay: null, status: 'allowed', representativeClaim: null, overage: null, updatedAt: 1_000_100 } })] });
    await p;
    expect(t.bridge.refreshClaudeUsage).toHaveBeenCalledWith({ connectionId: 'c1' });
    expect(t.dash.claude.getState().refreshing.c1).toBeUndefined();
    expect(t.dash.claude.getState().byConnection.c1!.usage!.status).toBe('allowed');
    t.bridge.refreshClaudeUsage.mockRejectedValueOnce(new BridgeError('usage_unavailable', 'the usage call answered HTTP 503', undefined, 502));
    await t.dash.claude.getState().refreshUsage('c1');
    expect(t.dash.toasts.getState().items.at(-1)?.message).toBe('Could not read the usage: the usage call answered HTTP 503');
  });

  it('an import error is thrown for the form; a success says so', async () => {
    const t = testDashboard();
    await t.dash.start();
    t.bridge.importClaudeCredentials.mockRejectedValueOnce(new BridgeError('credentials_not_found', 'no Claude Code credentials at /x', 'path', 400));
    await expect(t.dash.claude.getState().importCredentials({})).rejects.toMatchObject({ code: 'credentials_not_found' });
    t.bridge.importClaudeCredentials.mockResolvedValueOnce(connection({ id: 'c3', name: 'Claude Max (Claude Code)', kind: 'claude-subscription' }));
    await t.dash.claude.getState().importCredentials({});
    expect(t.dash.toasts.getState().items.at(-1)?.message).toBe('Imported Claude Max (Claude Code) from Claude Code');
  });
});

// Claude subscription accounts (issue 13, SPEC §2b): the public surface the engine wires in.
export { accountApiBase, claudeConfigFrom, type ClaudeOAuthConfig } from './claudeConfig';
export { ClaudeAuthError, type ClaudeAuthErrorCode } from './claudeAuthError';
export { createUndiciHttp, HttpTransportError, type HttpFn, type HttpRequest, type HttpResponse } from './http';
export { buildAuthorizeUrl, challengeFor, createPkce, createState, parseAuthorizationInput, parseCallbackQuery, type PkcePair } from './pkce';
export { ClaudeLoginFlow, LOGIN_TTL_MS, type LoginFlowDeps, type LoginStart } from './loginFlow';
export {
  bundleSecrets,
  parseCredentialsFile,
  parsePastedTokens,
  parseStoredBundle,
  serializeBundle,
  type ClaudeTokenBundle,
} from './tokenBundle';
export { claudeCodeCredentialsPath, readClaudeCodeCredentials } from './claudeCodeCredentials';
export { exchangeCode, refreshTokens } from './tokenEndpoint';
export { ClaudeTokenManager, type TokenAccountView, type TokenManagerDeps, type TokenOutcome } from './tokenManager';
export { isLimit429, parseUnifiedHeaders, type SlowStatus, type UnifiedHeaders } from './unifiedHeaders';
export { UsageBook, type Headroom, type UsageSnapshot, type UsageWindow, type WindowHeadroom } from './usageWindows';
export {
  AccountApiError,
  fetchOrganizationUUID,
  fetchUsage,
  OAUTH_BETA,
  postResetRateLimits,
  type ResetAnswer,
  type ResetResult,
  type UsageAnswer,
} from './accountApi';
export {
  IDLE,
  LANE_HEADER,
  LANE_HEADER_VALUE,
  laneAt,
  nextLane,
  type LaneDecision,
  type LaneEndReason,
  type LaneEvent,
  type LaneState,
} from './lowPriorityLane';
export { LaneController, type LaneView } from './laneController';
export { slowMaxWaitMs, slowRetryDelayMs, waitBudgetMs } from './slowWait';
export { LimitResetService, memoAfter, resetGate, type ResetOutcome, type ResetRequest, type ResetView } from './limitReset';
export {
  ClaudeTokenError,
  createClaudeAttemptInterceptor,
  upstreamHeaders,
  type AttemptFn,
  type AttemptInterceptor,
  type ClaudeAttempt,
  type ClaudeEvent,
  type ClaudeInterceptorDeps,
  type ClaudeOutcome,
} from './claudeInterceptor';

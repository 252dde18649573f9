// Numbered schema migrations. Append only: a shipped migration is never edited, a change is a new
// number. Each runs in a transaction and records itself in schema_migrations.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE key_value (
        namespace  TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, key)
      );

      CREATE TABLE provider_connections (
        id                     TEXT PRIMARY KEY,
        name                   TEXT NOT NULL,
        kind                   TEXT NOT NULL,
        provider               TEXT NOT NULL,
        auth_class             TEXT NOT NULL,
        base_url               TEXT NOT NULL,
        priority               INTEGER NOT NULL DEFAULT 1,
        enabled                INTEGER NOT NULL DEFAULT 1,
        models                 TEXT NOT NULL DEFAULT '[]',
        passthrough_models     INTEGER NOT NULL DEFAULT 1,
        max_concurrent         INTEGER,
        rate_limit_overrides   TEXT NOT NULL DEFAULT '{}',
        rate_limit_protection  INTEGER NOT NULL DEFAULT 0,
        disable_cooling        INTEGER NOT NULL DEFAULT 0,
        provider_specific_data TEXT NOT NULL DEFAULT '{}',
        timeouts               TEXT NOT NULL DEFAULT '{}',
        secret_enc             TEXT,
        secret_masked          TEXT,
        test_status            TEXT NOT NULL DEFAULT 'untested',
        rate_limited_until     INTEGER,
        backoff_level          INTEGER NOT NULL DEFAULT 0,
        last_error             TEXT,
        last_error_type        TEXT,
        error_code             TEXT,
        last_error_at          INTEGER,
        last_used_at           INTEGER,
        expired_retries        INTEGER NOT NULL DEFAULT 0,
        created_at             INTEGER NOT NULL,
        updated_at             INTEGER NOT NULL
      );
      CREATE INDEX idx_pc_provider ON provider_connections(provider);

      CREATE TABLE client_keys (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        key_hash     TEXT NOT NULL UNIQUE,
        key_enc      TEXT NOT NULL,
        masked       TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at   INTEGER
      );

      CREATE TABLE domain_circuit_breakers (
        provider   TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE proxy_logs (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        id              TEXT NOT NULL UNIQUE,
        started_at      INTEGER NOT NULL,
        protocol        TEXT NOT NULL,
        path            TEXT NOT NULL,
        client_key_id   TEXT,
        requested_model TEXT,
        model           TEXT,
        stream          INTEGER NOT NULL DEFAULT 0,
        status          INTEGER NOT NULL,
        error_code      TEXT,
        error_message   TEXT,
        connection_id   TEXT,
        connection_name TEXT,
        provider        TEXT,
        ttfb_ms         INTEGER,
        duration_ms     INTEGER,
        input_tokens    INTEGER,
        output_tokens   INTEGER,
        skipped         TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX idx_pl_timestamp ON proxy_logs(started_at);
      CREATE INDEX idx_pl_connection ON proxy_logs(connection_id, seq);

      CREATE TABLE proxy_log_attempts (
        request_id      TEXT NOT NULL,
        attempt         INTEGER NOT NULL,
        connection_id   TEXT NOT NULL,
        connection_name TEXT NOT NULL,
        provider        TEXT NOT NULL,
        model           TEXT NOT NULL,
        started_at      INTEGER NOT NULL,
        status          INTEGER,
        error_class     TEXT,
        error_code      TEXT,
        error_message   TEXT,
        ttfb_ms         INTEGER,
        duration_ms     INTEGER,
        failed_over     INTEGER NOT NULL DEFAULT 0,
        queued_ms       INTEGER,
        PRIMARY KEY (request_id, attempt)
      );
      CREATE INDEX idx_pla_connection ON proxy_log_attempts(connection_id, started_at);
    `,
  },
  {
    version: 2,
    name: 'request log: drop the per-connection indexes',
    // Every request writes the log; these two indexes cost a B-tree insert each and only served
    // the dashboard's per-connection filter, which scans at most logs.maxRows rows without them.
    sql: `
      DROP INDEX IF EXISTS idx_pl_connection;
      DROP INDEX IF EXISTS idx_pla_connection;
    `,
  },
  {
    version: 3,
    name: 'combos, model mappings, and the combo trace of each request',
    // A combo's targets and options are small JSON documents read once at start and written
    // through on change. A mapping belongs to one combo and goes with it. The request log keeps
    // the combo trace (strategy order and per-target outcome) as JSON beside the skips.
    sql: `
      CREATE TABLE combos (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        strategy   TEXT NOT NULL,
        targets    TEXT NOT NULL,
        options    TEXT NOT NULL DEFAULT '{}',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX idx_combos_name ON combos(name COLLATE NOCASE);

      CREATE TABLE model_mappings (
        id         TEXT PRIMARY KEY,
        pattern    TEXT NOT NULL,
        combo_id   TEXT NOT NULL REFERENCES combos(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX idx_mm_pattern ON model_mappings(pattern COLLATE NOCASE);

      ALTER TABLE proxy_logs ADD COLUMN combo TEXT;
    `,
  },
  {
    version: 4,
    name: 'connections declare whether they serve /responses; attempts record their translation and last-resort probes',
    // Existing connections get their kind's default: OpenAI's own API serves the Responses API,
    // OpenAI-compatible and local servers are reached through Chat Completions.
    sql: `
      ALTER TABLE provider_connections ADD COLUMN serves_responses INTEGER NOT NULL DEFAULT 0;
      UPDATE provider_connections SET serves_responses = 1 WHERE kind = 'openai';
      ALTER TABLE proxy_log_attempts ADD COLUMN translated TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN dropped TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN last_resort INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // 5, not 4: main's migration 4 (connections' Responses switch, translated attempts) came from
    // h/translate while this branch was open; both apply in order after the merge.
    version: 5,
    name: 'session affinity pins, exclusive connection leases, client key scopes',
    // Pins: one row per (client key, scope, session); scope '' is plain routing, else a combo id.
    // Leases: only the owner's SHA-256 is stored (R-LS-03); the unique indexes are the one active
    // lease per owner and per connection (R-LS-05): a lease's row is deleted when it ends. The
    // generation counter lives in key_value so a generation is never issued twice. R-SA-05: a
    // saved codexSessionAffinityTtlMs becomes sessionAffinityTtlMs (unless that is already set).
    sql: `
      CREATE TABLE session_pins (
        id             TEXT NOT NULL UNIQUE,
        client_key_id  TEXT NOT NULL,
        scope          TEXT NOT NULL,
        session_id     TEXT NOT NULL,
        source         TEXT NOT NULL,
        connection_id  TEXT NOT NULL,
        target_key     TEXT,
        target_index   INTEGER,
        model          TEXT,
        created_at     INTEGER NOT NULL,
        pinned_at      INTEGER NOT NULL,
        last_used_at   INTEGER NOT NULL,
        PRIMARY KEY (client_key_id, scope, session_id)
      );

      CREATE TABLE session_leases (
        id             TEXT PRIMARY KEY,
        owner_hash     TEXT NOT NULL UNIQUE,
        client_key_id  TEXT NOT NULL,
        connection_id  TEXT NOT NULL UNIQUE,
        generation     INTEGER NOT NULL,
        ttl_ms         INTEGER NOT NULL,
        label          TEXT,
        acquired_at    INTEGER NOT NULL,
        renewed_at     INTEGER NOT NULL,
        expires_at     INTEGER NOT NULL
      );

      ALTER TABLE client_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE client_keys ADD COLUMN allowed_connections TEXT NOT NULL DEFAULT '[]';

      ALTER TABLE proxy_logs ADD COLUMN session TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN via TEXT;

      INSERT OR IGNORE INTO key_value (namespace, key, value, updated_at)
        SELECT namespace, 'sessionAffinityTtlMs', value, updated_at FROM key_value
        WHERE namespace = 'settings' AND key = 'codexSessionAffinityTtlMs';
      DELETE FROM key_value WHERE namespace = 'settings' AND key = 'codexSessionAffinityTtlMs';
    `,
  },
  {
    version: 6,
    name: 'outbound proxy per connection, egress IP per attempt',
    // The proxy URL is kept for display in outbound_proxy (credentials masked) and, when it carries
    // credentials, encrypted in outbound_proxy_enc. The egress IP an attempt left through (from the
    // per-connection probe) is what the egress-bucketed lockout looks up (SPEC §7c); no new index:
    // the lookup is window-filtered through idx_pl_timestamp and the attempts' primary key.
    sql: `
      ALTER TABLE provider_connections ADD COLUMN outbound_proxy TEXT;
      ALTER TABLE provider_connections ADD COLUMN outbound_proxy_enc TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN egress_ip TEXT;
    `,
  },
  {
    version: 7,
    name: 'stream resilience figures per attempt',
    // Per streamed attempt: time to first model output, bytes and frames read (and how many were
    // output), which watchdog ended it, and mid-stream recovery (continued elsewhere / continued
    // an earlier answer, and how).
    sql: `
      ALTER TABLE proxy_log_attempts ADD COLUMN first_output_ms INTEGER;
      ALTER TABLE proxy_log_attempts ADD COLUMN bytes INTEGER;
      ALTER TABLE proxy_log_attempts ADD COLUMN frames INTEGER;
      ALTER TABLE proxy_log_attempts ADD COLUMN output_frames INTEGER;
      ALTER TABLE proxy_log_attempts ADD COLUMN watchdog TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN continued_elsewhere INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE proxy_log_attempts ADD COLUMN continuation TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN prefill_refused INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 8,
    name: 'same-target retries per attempt',
    // An attempt that sent the request again to the same connection and model after a short wait:
    // how long it waited, why (the upstream's hint, or a server error retried after the default
    // delay), and the status of the failure it retried.
    sql: `
      ALTER TABLE proxy_log_attempts ADD COLUMN retry_waited_ms INTEGER;
      ALTER TABLE proxy_log_attempts ADD COLUMN retry_why TEXT;
      ALTER TABLE proxy_log_attempts ADD COLUMN retry_after_status INTEGER;
    `,
  },
  {
    version: 9,
    name: 'request log: the waits of each request, and an index of failed requests',
    // The waits a request took (request queue, concurrency caps, cooldown waits) with their reason,
    // as JSON beside the skips; NULL when it waited for nothing. The partial index holds failed
    // requests only, so the "failed" filters page through them without scanning every success,
    // and a successful request (nearly all of them) costs no extra B-tree insert.
    sql: `
      ALTER TABLE proxy_logs ADD COLUMN waits TEXT;
      CREATE INDEX idx_pl_failed ON proxy_logs(seq) WHERE status >= 400;
    `,
  },
  {
    version: 10,
    name: 'rate-limit protection mode per connection',
    // Issue 22: protection is automatic / on / off. The old boolean maps true to "on" and false to
    // "auto" (false never opted out: the safety net still applied, SPEC R-RQ-26). The boolean
    // column stays, written as mode = "on", so an older build reads the same explicit protection.
    sql: `
      ALTER TABLE provider_connections ADD COLUMN rate_limit_protection_mode TEXT NOT NULL DEFAULT 'auto';
      UPDATE provider_connections SET rate_limit_protection_mode = 'on' WHERE rate_limit_protection = 1;
    `,
  },
  {
    version: 11,
    name: 'usage roll-ups by minute, hour and day',
    // Issue 23 (docs/decisions/overview-23-usage-rollups.md): one row per bucket and (dimension,
    // key), where the dimension is '' (every request), connection, provider, model (served),
    // requestedModel, combo or clientKey, and key '' means none. Sums, and 82 latency-histogram
    // counts each for time to first byte (t0..t81) and duration (d0..d81) of successful requests.
    // Written in the request log's own write transaction; pruned on their own retention. Keyed by
    // dimension first, so the time series (dimension '') and each dimension's range are seeks.
    sql: ['usage_minute', 'usage_hour', 'usage_day'].map(usageRollupTable).join('\n'),
  },
  {
    version: 12,
    name: 'cost: cache tokens and cost per request, and the operator\'s model prices',
    // Issue 23. Each request's prompt-cache reads and writes (parts of input_tokens) and its cost in
    // USD, priced once when it finished (NULL: not reported / the model had no price). model_prices
    // holds the prices edited in the dashboard (USD per million tokens; a NULL cache price means the
    // input price), each with the day it applies from; they override the built-in list.
    sql: `
      ALTER TABLE proxy_logs ADD COLUMN cache_read_tokens INTEGER;
      ALTER TABLE proxy_logs ADD COLUMN cache_write_tokens INTEGER;
      ALTER TABLE proxy_logs ADD COLUMN cost_usd REAL;
      CREATE TABLE model_prices (
        model TEXT PRIMARY KEY,
        input REAL NOT NULL,
        output REAL NOT NULL,
        cache_read REAL,
        cache_write REAL,
        as_of TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 13,
    name: 'notifications and connection state spans',
    // Issue 23. The notification feed (bounded, newest kept; a repeat of the same kind and subject
    // within the folding window updates its row) and the per-connection state timeline: one row per
    // span of a state (cooldown, breaker, lockout with its model, terminal, disabled), ended_at NULL
    // while it holds, until_hint the time it was due to lift by itself (a lazily expiring state ends
    // there). Both are pruned by the engine.
    sql: `
      CREATE TABLE notifications (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        at INTEGER NOT NULL,
        last_at INTEGER NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        severity TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        link TEXT NOT NULL,
        read INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX idx_notifications_last ON notifications(last_at);
      CREATE TABLE state_spans (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        connection_id TEXT NOT NULL,
        span_key TEXT NOT NULL,
        kind TEXT NOT NULL,
        reason TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        until_hint INTEGER
      );
      CREATE INDEX idx_state_spans_open ON state_spans(ended_at) WHERE ended_at IS NULL;
      CREATE INDEX idx_state_spans_time ON state_spans(started_at);
    `,
  },
];

/** Migration 11's table shape (frozen: a later change is a new migration). */
function usageRollupTable(table: string): string {
  const hist = (p: string) => Array.from({ length: 82 }, (_, i) => `${p}${i} INTEGER NOT NULL DEFAULT 0`).join(',\n        ');
  return `
      CREATE TABLE ${table} (
        bucket_start       INTEGER NOT NULL,
        dim                TEXT NOT NULL,
        key                TEXT NOT NULL,
        label              TEXT,
        requests           INTEGER NOT NULL DEFAULT 0,
        successes          INTEGER NOT NULL DEFAULT 0,
        errors             INTEGER NOT NULL DEFAULT 0,
        rescued            INTEGER NOT NULL DEFAULT 0,
        input_tokens       INTEGER NOT NULL DEFAULT 0,
        output_tokens      INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd           REAL NOT NULL DEFAULT 0,
        unpriced           INTEGER NOT NULL DEFAULT 0,
        ${hist('t')},
        ${hist('d')},
        PRIMARY KEY (dim, bucket_start, key)
      ) WITHOUT ROWID;`;
}

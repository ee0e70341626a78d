-- kbench result store, schema version 3: the shared lab (`kbench serve`).
--
-- api_tokens: who may write through the HTTP API. Only the SHA-256 of a
-- token's secret is kept (hex); `kbench token create` prints the secret
-- once. A revoked token keeps its row (and its name) with the time it was
-- revoked, so a name is never reused for another secret by mistake.
CREATE TABLE api_tokens (
    name          TEXT   NOT NULL PRIMARY KEY,
    secret_sha256 TEXT   NOT NULL UNIQUE,
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);

-- pushes: one row per stored `POST .../samples` document, keyed by the
-- push id the client chose (the Idempotency-Key header). Written in the
-- same transaction as the samples, so a push id is here exactly when its
-- samples are: a retried push finds its id and stores nothing again.
-- `digest` is the SHA-256 of the document, to refuse a push id reused for
-- other content.
CREATE TABLE pushes (
    id            TEXT   NOT NULL PRIMARY KEY,
    set_name      TEXT   NOT NULL,
    digest        TEXT   NOT NULL,
    samples       BIGINT NOT NULL,
    token_name    TEXT   NOT NULL,
    pushed_at_ms  BIGINT NOT NULL
);

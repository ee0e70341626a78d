-- kbench result store, schema version 3, PostgreSQL dialect: API tokens
-- and push ids of the shared lab (see ../sqlite/schema_v3.sql; the same
-- tables, unchanged: they have no id column and no INTEGER).
CREATE TABLE api_tokens (
    name          TEXT   NOT NULL PRIMARY KEY,
    secret_sha256 TEXT   NOT NULL UNIQUE,
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);

CREATE TABLE pushes (
    id            TEXT   NOT NULL PRIMARY KEY,
    set_name      TEXT   NOT NULL,
    digest        TEXT   NOT NULL,
    samples       BIGINT NOT NULL,
    token_name    TEXT   NOT NULL,
    pushed_at_ms  BIGINT NOT NULL
);

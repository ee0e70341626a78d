-- kbench result store, schema version 5: token scopes and lease owners.
--
-- api_tokens.scopes: what a token may do on the lab server, comma-separated
-- (read, push, submit, work, admin; kbench_store::Scope). Tokens made
-- before version 5 could do everything but what admin adds, so they keep
-- exactly that: read,push,submit,work.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read,push,submit,work';

-- jobs.token_name: the token whose worker holds (or last held) the lease.
-- Only that token renews or finishes the lease and uploads the job's run.
-- NULL for leases taken before version 5 (any token may end those).
ALTER TABLE jobs ADD COLUMN token_name TEXT;

-- workers.token_name: the token a worker name belongs to, set by the first
-- lease under that name; another token cannot act under the name.
ALTER TABLE workers ADD COLUMN token_name TEXT;

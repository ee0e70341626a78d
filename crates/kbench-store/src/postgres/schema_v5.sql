-- kbench result store, schema version 5, PostgreSQL dialect: token scopes
-- and lease owners (see ../sqlite/schema_v5.sql for what each holds).
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read,push,submit,work';
ALTER TABLE jobs ADD COLUMN token_name TEXT;
ALTER TABLE workers ADD COLUMN token_name TEXT;

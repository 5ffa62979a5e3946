-- A project's https token for https:// repositories, sealed by the server like ssh_key_enc
-- (gradient-server §13.1).
ALTER TABLE project ADD COLUMN https_token_enc BYTEA;

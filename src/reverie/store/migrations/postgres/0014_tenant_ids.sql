-- PostgreSQL port of ../0014_tenant_ids.sql: episode ids are unique per tenant, and what names
-- an episode by id (a citation, an archive index row) names its tenant too. PostgreSQL changes
-- the constraints in place; `seq` and every other value stay as they are.
ALTER TABLE scopes ADD CONSTRAINT scopes_tenant UNIQUE (scope_key, tenant);

ALTER TABLE episodes ADD COLUMN tenant TEXT;
UPDATE episodes e SET tenant = s.tenant FROM scopes s WHERE s.scope_key = e.scope_key;
ALTER TABLE episodes ALTER COLUMN tenant SET NOT NULL;

-- A citation and an archive row take the tenant of the episode they named: ids were unique
-- across tenants until now, so the old id alone resolves it.
ALTER TABLE citations ADD COLUMN tenant TEXT;
UPDATE citations c SET tenant = e.tenant FROM episodes e WHERE e.id = c.episode_id;
ALTER TABLE citations ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE archived_episodes ADD COLUMN tenant TEXT;
UPDATE archived_episodes a SET tenant = e.tenant FROM episodes e WHERE e.id = a.episode_id;
ALTER TABLE archived_episodes ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE citations DROP CONSTRAINT citations_episode_id_fkey;
ALTER TABLE archived_episodes DROP CONSTRAINT archived_episodes_episode_id_fkey;
ALTER TABLE archived_episodes DROP CONSTRAINT archived_episodes_pkey;
ALTER TABLE episodes DROP CONSTRAINT episodes_id_key;
ALTER TABLE episodes DROP CONSTRAINT episodes_scope_key_fkey;

ALTER TABLE episodes ADD CONSTRAINT episodes_tenant_id_key UNIQUE (tenant, id);
ALTER TABLE episodes ADD CONSTRAINT episodes_scope_fkey
    FOREIGN KEY (scope_key, tenant) REFERENCES scopes(scope_key, tenant);
ALTER TABLE citations ADD CONSTRAINT citations_episode_fkey
    FOREIGN KEY (tenant, episode_id) REFERENCES episodes(tenant, id);
ALTER TABLE archived_episodes ADD PRIMARY KEY (tenant, episode_id);
ALTER TABLE archived_episodes ADD CONSTRAINT archived_episodes_episode_fkey
    FOREIGN KEY (tenant, episode_id) REFERENCES episodes(tenant, id);
DROP INDEX citations_episode;
CREATE INDEX citations_episode ON citations(tenant, episode_id);

ALTER TABLE vector_units DROP CONSTRAINT vector_units_model_kind_ref_key;
ALTER TABLE vector_units ADD CONSTRAINT vector_units_unit_key UNIQUE (scope_key, model, kind, ref);

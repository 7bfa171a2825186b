-- Port of ../0016_bundles_in_database.sql: a PostgreSQL server has no folder its clients share,
-- so archive bundles live in the database itself, content-addressed like SQLite's files.
--
-- archive_blobs: the gzipped JSON-lines bytes of a bundle, named by their sha256 ("sha256:<hex>",
-- the hash archive_bundles names). A blob is written and read back (verified) before the
-- transaction that indexes it, as a file is; one no index row names is a left-over of a crash
-- and holds only text the hot store or another bundle holds too.
--
-- Deleting an index row deletes its bytes in the same transaction (the trigger): an erasure that
-- drops or re-addresses a bundle leaves no readable copy of the old one once it commits.
CREATE TABLE archive_blobs (
    hash TEXT PRIMARY KEY,
    data BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
ALTER TABLE archive_blobs ALTER COLUMN data SET STORAGE EXTERNAL; -- gzipped already

CREATE FUNCTION archive_blob_unindexed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM archive_blobs WHERE hash = OLD.hash;
    RETURN OLD;
END
$$;
CREATE TRIGGER archive_bundles_blob AFTER DELETE ON archive_bundles
    FOR EACH ROW EXECUTE FUNCTION archive_blob_unindexed();

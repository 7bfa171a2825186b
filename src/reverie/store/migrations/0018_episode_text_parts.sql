-- The episode full-text index in parts by seq (reverie.store.sqlite.text): the first seq of
-- each part. The one table indexed so far, episodes_fts, is the part that starts at seq 1;
-- later parts are created as the newest fills.
CREATE TABLE episodes_fts_parts (low INTEGER PRIMARY KEY) STRICT;
INSERT INTO episodes_fts_parts(low) VALUES (1);

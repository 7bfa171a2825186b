-- Memory over time: reinforcement and the dream journal.
--
-- observations: one row per (cycle, page) the cycle re-observed — the page's pattern showed up in
-- its evidence. Append-only, written in the cycle's transaction. A page's strength (episodes,
-- distinct cycles, last seen) is an aggregate over the rows of cycles not undone, so undoing a
-- cycle takes its reinforcement back without rewriting anything.
CREATE TABLE observations (
    cycle_id TEXT NOT NULL,
    page_id TEXT NOT NULL REFERENCES pages(id),
    episodes INTEGER NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (cycle_id, page_id)
) STRICT;
CREATE INDEX observations_page ON observations(page_id);

-- journal: a short human-readable entry per cycle, undo, restore and import, in order.
CREATE TABLE journal (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    cycle_id TEXT,
    created_at TEXT NOT NULL,
    text TEXT NOT NULL
) STRICT;
CREATE INDEX journal_scope ON journal(scope_key, n);

-- Model response cache: an answer stored under a hash of (model, prompt version, input)
-- so a cycle re-run after a crash or an undo pays for nothing twice. Not cycle state: written
-- outside the cycle transaction, never undone.
CREATE TABLE model_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

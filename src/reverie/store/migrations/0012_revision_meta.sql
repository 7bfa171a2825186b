-- A revision's metadata as JSON: its tallies (episodes, successes, failures, error classes,
-- first and last seen), shown in the page's header and JSON and never spent from the recall
-- budget, and the fields a person pinned (title, kind). NULL for a revision with neither; its
-- hash does not cover the column then.
ALTER TABLE revisions ADD COLUMN meta TEXT;

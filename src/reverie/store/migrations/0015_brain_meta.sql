-- Settings a database records about itself, one row each: which embedder made its vectors
-- ("embedder": JSON with its name, model id and dimension), so a later open uses the same one
-- or is refused with the name to use, and two embedders' vectors are never compared.
CREATE TABLE brain_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

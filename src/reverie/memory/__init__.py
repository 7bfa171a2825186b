"""Memory over time: the Markdown mirror, revisions, the cold archive, the journal, exports
and undo."""

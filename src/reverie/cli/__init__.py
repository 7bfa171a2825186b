"""The command line: one module per group of commands, shared options in common."""

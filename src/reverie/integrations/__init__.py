"""Glue for agent loops and frameworks."""

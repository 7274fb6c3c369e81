"""Repo-local glue: the boundary plugin is loaded through its pytest11 entry point."""

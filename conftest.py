"""Repo-local glue: none. The boundary plugin loads only with the live suite (boundary/suite/pytest.ini)."""

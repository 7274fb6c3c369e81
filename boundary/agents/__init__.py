"""Agents under test: how to configure, launch and script each one."""

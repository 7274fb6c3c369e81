"""Agents under test: how to configure, launch and script each one.

May import the model, toolchain and host, and the core modules (tests/test_layers.py holds the layers).
"""

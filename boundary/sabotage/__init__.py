"""Sabotaged runners: each breaks one boundary a careful runner keeps, so the self-tests show a check can fail.

May import runners and the layers below; nothing in the harness imports it (tests/test_layers.py).
"""

"""The terminal scenario: cross_job's attack from Claude Code's interactive mode (scenario.py), and job B's shell
typing into the operator's terminal (keystrokes.py).

May import the layers below; never suite.
"""

"""The sessions scenario: job B asks for job A's session (scenario.py), also through the agent's own CLI (cli.py).

May import the layers below; never suite.
"""

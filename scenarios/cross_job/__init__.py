"""The cross-job scenario: job B tries to read job A's data (scenario.py), with every channel and every other
tool it is offered, attacked from its schema (tool_attacks.py).

May import the layers below; never suite.
"""

"""The escalation scenario: job B asks its agent to leave the sandbox (scenario.py), one channel per way out
(channels.py).

May import the layers below; never suite.
"""

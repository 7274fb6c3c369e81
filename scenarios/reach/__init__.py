"""The reach scenario: job B reaches for the host's secrets (scenario.py); tools.py attacks every other tool it
is offered with the places' URLs. The client, programs, places and rules it runs are in `boundary.reach`.

May import the layers below; never suite.
"""

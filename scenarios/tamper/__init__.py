"""The tamper scenario: job B rewrites every file that configures it (scenario.py); configuring.py finds those
files, groups.py sorts them into what the attack does with each.

May import the layers below; never suite.
"""

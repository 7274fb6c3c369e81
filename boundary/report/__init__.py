"""A run's report: the record (record.py), the one pass rule (passrule.py), the view model every rendering draws
(view.py), and one module per rendering (terminal.py, markdown.py, html.py), registered in renderings.py.

Import the modules themselves: this package imports nothing, so building a record loads no rendering.
May import jobs and the layers below (the scenarios for annotations only); never suite.
"""

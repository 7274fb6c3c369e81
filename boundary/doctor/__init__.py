"""The doctor: what this host can run, and exactly why not (`boundary doctor`, and the live suite's preflight).

`checks.py` the checks and their order, `check.py` one check's result, `node.py` the Node the tools need,
`namespaces.py` why a namespace was refused. May import host, toolchain and the core modules; never runners, jobs,
scenarios, report or suite.
"""

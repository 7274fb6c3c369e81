"""Running jobs: one job's launch, network namespace, pod and trace, and a scenario's session of jobs.

May import runners, agents, host, model, toolchain and the core modules; never scenarios, report or suite.
"""

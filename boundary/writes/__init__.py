"""Write attacks: a job writing another job's files or its own configuration, each write judged from outside.

May import runners, agents, model and the core modules; never jobs, scenarios, report or suite.
"""

"""The sweep: job A plants canaries wherever it can write, job B searches wherever it can read (scenario.py).

discover, places, search, forms and ipc build its shell; judge reads it. May import the layers below; never suite.
"""

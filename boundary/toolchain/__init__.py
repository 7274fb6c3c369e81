"""The tools a run needs and this host's fitness: the pinned npm tools, Node.js, versions, and the doctor.

May import host, sandboxes and the core modules (runners for annotations only); nothing above.
"""

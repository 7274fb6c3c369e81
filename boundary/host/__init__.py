"""Disposable hosts for host-health checks (incident 3): namespaces now, containers later."""

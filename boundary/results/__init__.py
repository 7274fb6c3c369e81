"""The run record's types: what a probe found, what a job did, what it reached on the network, what a runner verb
wrote. Filled by the jobs and the scenarios, read by the report; defined here, below all of them.

Imports only the standard library: every layer may use it.
"""

from boundary.results.job import JobReport, VerbWrite
from boundary.results.network import NetworkUse
from boundary.results.probe import ProbeResult

__all__ = ["JobReport", "NetworkUse", "ProbeResult", "VerbWrite"]

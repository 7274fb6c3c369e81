"""The harness's own tests: unit tests, and live controls that run the scenarios against sabotaged runners."""

pytest_plugins = ["pytester"]

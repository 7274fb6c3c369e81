"""boundary: a live sandbox boundary test harness for coding-agent runners."""

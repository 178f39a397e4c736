"""A tiny stock-keeping package: the Python half of the coding_agent sample."""

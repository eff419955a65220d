"""The GitHub edge: the REST client (client.py, on PyGithub through transport.py), the mapping
of its answers onto infx's values (reading.py, values.py), the one request meter
(budget.py), and what Actions hands a step and takes back (actions.py)."""

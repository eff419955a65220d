"""The comment commands at merge time: /reuse-sweep-run, /stage-results and the push gate."""

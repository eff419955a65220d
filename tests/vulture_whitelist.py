"""What vulture takes for dead code in infx but something outside infx's own calls uses.

Read by vulture (tests/test_house_rules.py), never imported: one name a line, with who
uses it. Anything else vulture reports is dead and goes.
"""
# ruff: noqa

NewEntry.append_only  # a TypedDict key: `infx changelog new` passes its options as **entry
NewEntry.no_evals  # likewise
Command.epilog  # click prints it at the end of a command's help
LazyGroup.list_commands  # click calls it to list a group's commands
LazyGroup.get_command  # click calls it to find a command by name
InfxGroup.format_commands  # click calls it to write `infx --help`
Transport._initAttributes  # PyGithub calls it on every object it builds
Component.version  # a TypedDict key of a plan row's router or KV offload backend
MatrixPlan.single_node  # the plan's JSON keys (a TypedDict): json.dumps writes them
MatrixPlan.multi_node  # likewise
MatrixPlan.agentic_evals  # likewise
MatrixPlan.multinode_evals  # likewise
MatrixPlan.multinode_agentic_evals  # likewise
MatrixPlan.changelog_metadata  # likewise
Issued.issuer_run  # a dataclass field: the issuer run that uploaded the receipt, kept for reports and tests
Resolver11.processing_version  # ruamel.yaml's resolver reads it for every scalar it resolves (infx/matrix/load.py)

"""The format registry (`infx/formats.py`) agrees with the schemas that carry it: the
settings name the same formats, each format's master-config schema exists, the changelog
schema holds every key any format accepts, and the sweep-matrix schema every field any
format prints, so a format change is an edit of the registry and its schema files."""

from __future__ import annotations

from infx import schemas
from infx.formats import E2E, FORMATS, NAMES, PR2707, PR3058, by_name


def test_settings_name_the_known_formats() -> None:
    assert schemas.load("settings")["properties"]["format"]["enum"] == list(NAMES)
    assert FORMATS == (PR2707, PR3058, E2E) and by_name("pr2707") is PR2707


def test_each_format_has_its_master_config_schema() -> None:
    assert {f.master_schema for f in FORMATS} == {
        "master-config",
        "master-config-pr3058",
        "master-config-e2e",
    }
    for fmt in FORMATS:
        assert "worker" in schemas.known_keys(fmt.master_schema) or fmt.aggregate != "worker"


def test_the_changelog_schema_holds_every_key_a_format_knows() -> None:
    known = set(schemas.load("perf-changelog")["properties"])
    assert known == set().union(*(f.entry_keys for f in FORMATS))


def test_the_plan_schema_holds_every_field_a_format_prints() -> None:
    defs = schemas.load("sweep-matrix")["$defs"]
    kinds = {
        "single_fixed": "singleNodeRow",
        "multi_fixed": "multiNodeRow",
        "single_agentic": "agenticSingleNodeRow",
        "multi_agentic": "agenticMultiNodeRow",
    }
    for fmt in FORMATS:
        for kind, name in kinds.items():
            fields = getattr(fmt.shapes, kind)
            assert set(fields) <= set(defs[name]["properties"]), (fmt.name, kind)
        assert set(fmt.shapes.worker) == set(defs["worker"]["properties"])
    entries = schemas.load("sweep-matrix")["properties"]["changelog_metadata"]["properties"]
    printed = set(entries["entries"]["items"]["properties"])
    assert all(set(f.entry_fields) <= printed for f in FORMATS)


def test_pr3058_is_pr2707_plus_what_changed() -> None:
    """The seed era adds fields and keys; it drops none the older era printed."""
    for kind in ("single_fixed", "multi_fixed", "single_agentic", "multi_agentic"):
        old, new = getattr(PR2707.shapes, kind), getattr(PR3058.shapes, kind)
        assert [f for f in new if f in old] == list(old)
    assert set(PR3058.shapes.multi_fixed) - set(PR2707.shapes.multi_fixed) == {
        "node-count",
        "eval-framework",
        "eval-suite",
    }
    assert PR3058.entry_keys - PR2707.entry_keys == {"no-evals"}
    assert PR3058.space_keys - PR2707.space_keys == {"worker", "num-nodes"}


def test_e2e_is_pr3058_plus_what_changed() -> None:
    """The later era adds the recipe fields and require-power, and drops nothing."""
    for kind in ("single_fixed", "multi_fixed", "single_agentic", "multi_agentic"):
        old, new = getattr(PR3058.shapes, kind), getattr(E2E.shapes, kind)
        assert [f for f in new if f in old] == list(old)
        added = set(new) - set(old)
        assert added == {"srt-recipe", "eval-srt-recipe"} | (
            {"require-power"} if kind.endswith("fixed") else set()
        ), kind
    assert E2E.entry_keys == PR3058.entry_keys
    assert E2E.space_keys - PR3058.space_keys == {"srt-recipe", "eval-srt-recipe"}
    assert E2E.fixed_keys - PR3058.fixed_keys == {"require-power"}
    assert "require-power" not in schemas.known_keys(PR3058.master_schema)
    assert "srt-recipe" in schemas.known_keys(E2E.master_schema)

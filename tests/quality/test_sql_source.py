"""Great Expectations through SQL on the releases' own engine (`coworkenv.quality.sql_source`): expectations pushed
down into DuckDB over a published release's catalog views, passing and failing with GX's own counts and examples,
cross-table rules as `UnexpectedRowsExpectation`, and the engine's read-only refusal intact under GX."""

from __future__ import annotations

import pytest

from tests.support.suites import example_tasks, publish_task_release

pytestmark = pytest.mark.xdist_group("gx")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("sql_source") / "data"
    return root, publish_task_release(root, example_tasks()).release_id


def validate(release, table: str, expectations: list) -> dict:
    """Each expectation's GX result over one catalog view, by expectation type."""
    import great_expectations as gx

    from coworkenv.quality.gates import _context, quiet_gx

    root, release_id = release
    with quiet_gx():
        context = _context(None)  # the gates' own: in memory, progress bars off
        source = context.data_sources.add_coworkenv_release(name="release", release=release_id, data_root=str(root))
        try:
            batch = source.add_table_asset(table, table_name=table).add_batch_definition_whole_table("whole")
            suite = context.suites.add(gx.ExpectationSuite(name=table, expectations=expectations))
            run = context.validation_definitions.add(gx.ValidationDefinition(name=table, data=batch, suite=suite)).run()
        finally:
            source.close()
    return {result.expectation_config.type: result for result in run.results}


def test_column_expectations_run_in_duckdb_and_pass_on_a_clean_release(release):
    import great_expectations.expectations as gxe

    import coworkenv.quality.sql_source  # noqa: F401 — registers the data source type with GX

    results = validate(
        release,
        "src_tasks",
        [
            gxe.ExpectColumnValuesToNotBeNull(column="task_id"),
            gxe.ExpectColumnValuesToBeUnique(column="task_id"),
            gxe.ExpectColumnValuesToBeBetween(column="difficulty", min_value=1, max_value=5),
            gxe.ExpectTableRowCountToEqual(value=len(example_tasks())),
        ],
    )
    assert {name: r.success for name, r in results.items()} == dict.fromkeys(results, True), {
        name: r.exception_info for name, r in results.items()
    }


def test_a_broken_rule_fails_with_gx_counts_and_examples(release):
    import great_expectations.expectations as gxe

    import coworkenv.quality.sql_source  # noqa: F401

    hard = sum(t.difficulty > 2 for t in example_tasks())
    assert hard, "the examples must hold a task above difficulty 2"
    (result,) = validate(
        release, "src_tasks", [gxe.ExpectColumnValuesToBeBetween(column="difficulty", min_value=1, max_value=2)]
    ).values()
    assert not result.success and not result.exception_info.get("raised_exception")
    assert result.result["unexpected_count"] == hard
    assert all(value > 2 for value in result.result["partial_unexpected_list"])


def test_cross_table_rules_are_sql_over_the_other_views(release):
    """A verdict for a task the release does not hold: said as rows that must not exist."""
    import great_expectations.expectations as gxe

    import coworkenv.quality.sql_source  # noqa: F401

    def rule(query: str):
        (result,) = validate(
            release, "src_validations", [gxe.UnexpectedRowsExpectation(unexpected_rows_query=query)]
        ).values()
        assert not result.exception_info.get("raised_exception"), result.exception_info
        return result

    assert rule("select * from {batch} where task_id not in (select task_id from src_tasks)").success
    broken = rule("select * from {batch} where task_id in (select task_id from src_tasks where difficulty > 2)")
    hard = sum(t.difficulty > 2 for t in example_tasks())
    assert not broken.success and broken.result["observed_value"] >= hard


def test_the_engine_stays_read_only_under_gx(release, tmp_path):
    import great_expectations.expectations as gxe

    import coworkenv.quality.sql_source  # noqa: F401

    target = tmp_path / "leak.csv"
    sneaky = f"copy src_tasks to '{target}'; select * from {{batch}} where false"
    (result,) = validate(release, "src_tasks", [gxe.UnexpectedRowsExpectation(unexpected_rows_query=sneaky)]).values()
    assert not result.success and not target.exists()
    assert "read-only" in str(result.exception_info), result.exception_info

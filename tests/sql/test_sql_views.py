"""Staging and mart views give the numbers the fixture wrote (counted independently in `Truth`)."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from coworkenv.grading.passk import pass_at_k, pass_hat_k
from coworkenv.spec.capabilities import CAPABILITIES
from tests.sql.release_fixture import EVAL_TRIALS, POLICY_MODEL, rows

# --- staging --------------------------------------------------------------------------------------------------


def test_stg_tasks_types_and_gate(releases, latest_con):
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, count(*) filter (where passes_gate) as gated, min(difficulty) as lo, max(difficulty) as hi,
               count(*) filter (where is_repaired) as repaired, count(*) filter (where parent_id is not null) as with_parent,
               count(*) filter (where generator_kind = 'procedural') as procedural, min(n_capabilities) as min_caps,
               count(*) filter (where primary_capability <> capabilities[1]) as bad_primary
        from stg_tasks""",
    )
    assert r["n"] == r["gated"] == r["procedural"] == releases.r2.rows["tasks"]
    assert 1 <= r["lo"] <= r["hi"] <= 5
    assert r["repaired"] == r["with_parent"] == releases.r2.rescued_parents > 0
    assert r["min_caps"] >= 1 and r["bad_primary"] == 0
    types = {c["column_name"]: c["column_type"] for c in rows(latest_con, "describe stg_tasks")}
    assert (
        types["difficulty"] == "INTEGER" and types["capabilities"] == "VARCHAR[]" and types["passes_gate"] == "BOOLEAN"
    )


def test_stg_task_capabilities_unnests_every_capability(latest_con):
    (r,) = rows(
        latest_con,
        """
        select (select sum(n_capabilities) from stg_tasks) as expected, count(*) as n,
               count(*) filter (where is_primary) as primary_rows, (select count(*) from stg_tasks) as tasks
        from stg_task_capabilities""",
    )
    assert r["n"] == r["expected"]
    assert r["primary_rows"] == r["tasks"]


def test_stg_validations_flags_and_family(releases, latest_con):
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, count(distinct task_id) as tasks, count(*) filter (where is_failure = passed) as bad_flags,
               count(*) filter (where is_mandatory <> (severity = 'mandatory')) as bad_mandatory,
               count(distinct task_id) filter (where is_valid) as valid
        from stg_validations""",
    )
    assert r["n"] == releases.r2.rows["validations"]
    assert r["tasks"] == releases.r2.validated
    assert r["valid"] == releases.r2.valid
    assert r["bad_flags"] == r["bad_mandatory"] == 0
    wrong_family = """select count(*) as n from stg_validations v join stg_tasks t using (release_id, task_id)
                      where v.family_from_id <> t.family"""
    assert rows(latest_con, wrong_family) == [{"n": 0}]


def test_stg_validations_keeps_only_the_newest_battery(releases, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from coworkenv.data.catalog import connect
    from tests.support.releases import add_listed_part

    folder = releases.copy(releases.r2, tmp_path) / "validations"
    table = pq.read_table(folder)
    index = table.schema.get_field_index("battery_version")
    older = table.set_column(index, table.schema.field(index), pa.array([0] * table.num_rows, type=pa.int32()))
    add_listed_part(
        folder.parent, "validations", "older-battery.parquet", older
    )  # an older battery's rows for the same tasks
    con = connect(tmp_path)
    got = rows(con, "select count(*) as n, min(battery_version) as v from stg_validations")
    assert got == [{"n": releases.r2.rows["validations"], "v": 1}]


def test_stg_repairs_strategy_split(latest_con):
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, count(*) filter (where strategy_kind = 'rule' and strategy_code is not null) as rule,
               count(*) filter (where strategy_kind = 'llm' and strategy_code is null) as llm,
               count(*) filter (where n_patch_ops = 1) as one_op,
               count(*) filter (where is_valid_after <> (n_failed_codes_after = 0)) as inconsistent
        from stg_repairs""",
    )
    assert r["n"] == r["rule"] + r["llm"] == r["one_op"] > 0
    assert r["inconsistent"] == 0


def test_stg_trajectories_policies(releases, latest_con):
    got = {
        (r["agent"], r["model"], r["policy"]): r["n"]
        for r in rows(latest_con, "select agent, model, policy, count(*) as n from stg_trajectories group by all")
    }
    published = releases.r2.rows["tasks"]
    assert got == {
        ("oracle", None, "oracle"): published,
        ("null", None, "null"): published,
        ("hf", POLICY_MODEL, f"hf:{POLICY_MODEL}"): 3 * published,
    }
    (r,) = rows(
        latest_con,
        """
        select count(*) filter (where passed <> (score >= 0.75)) as bad_pass,
               count(*) filter (where is_safety_violation and score > 0) as unsafe_scored,
               count(*) filter (where agent = 'null' and not made_no_calls) as null_called
        from stg_trajectories""",
    )
    assert r == {"bad_pass": 0, "unsafe_scored": 0, "null_called": 0}


def test_stg_sft_counts_messages_and_calls(releases, latest_con):
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, sum(n_tokens) as tokens, count(*) filter (where not has_token_count) as missing,
               min(n_messages) as min_messages, count(*) filter (where n_tool_calls > 0) as with_calls,
               count(*) filter (where n_tools < 1) as no_tools,
               count(*) filter (where n_assistant_messages < 1) as no_assistant
        from stg_sft""",
    )
    assert r["n"] == releases.r2.rows["sft"]
    assert r["tokens"] == releases.r2.sft_tokens
    assert (
        r["missing"] == 0 and r["min_messages"] >= 3 and r["with_calls"] == r["n"]
    )  # the builder counts every example
    assert r["no_tools"] == r["no_assistant"] == 0


def test_stg_rl_eval_and_profile(releases, latest_con):
    assert rows(latest_con, "select count(*) as n, min(n_prompt_messages) as m from stg_rl") == [
        {"n": releases.r2.rows["rl"], "m": 2}
    ]
    groups = {r["benchmark_group"] for r in rows(latest_con, "select distinct benchmark_group from stg_eval_results")}
    assert groups <= {"general", "multi_step", "multi_turn"}
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, count(*) filter (where abs(pass_rate - stored_pass_rate) > 1e-9) as drift, sum(attempts) as attempts
        from stg_capability_profile""",
    )
    assert r["n"] == releases.r2.rows["capability_profile"] and r["drift"] == 0
    assert r["attempts"] == sum(trials for trials, _ in releases.r2.eval_pass.values())


# --- marts ----------------------------------------------------------------------------------------------------


def test_task_status_one_row_per_validated_task(releases, latest_con):
    (r,) = rows(
        latest_con,
        """
        select count(*) as n, count(distinct task_id) as ids, count(*) filter (where is_valid) as valid,
               count(*) filter (where is_published) as published, count(*) filter (where not is_valid and n_failed_mandatory = 0) as odd,
               count(*) filter (where difficulty is null or family is null) as unknown
        from task_status""",
    )
    assert r["n"] == r["ids"] == releases.r2.validated
    assert r["valid"] == r["published"] == releases.r2.valid
    assert r["odd"] == r["unknown"] == 0


def test_valid_share_by_family_matches_truth(releases, latest_con):
    got = rows(latest_con, "select * from valid_share_by_family")
    assert {r["family"]: (r["n_tasks"], r["n_valid"]) for r in got} == releases.r2.valid_by_family
    for r in got:
        assert 0 <= r["valid_share"] <= 1
        assert r["n_valid"] + r["n_invalid"] == r["n_tasks"]
        assert r["first_pass_valid_share"] <= r["final_valid_share"] <= 1
    assert sum(r["n_rescued"] for r in got) == releases.r2.rescued_parents
    assert sum(r["n_original"] for r in got) == 200


def test_rejection_reasons_by_family_sum_to_the_rejected_tasks(releases, latest_con):
    got = rows(latest_con, "select * from rejection_reasons_by_family")
    assert got, "the fixture rejects tasks"
    sizes = {(r["family"]): (r["n_family_tasks"], r["n_family_rejected"]) for r in got}
    assert sum(rejected for _, rejected in sizes.values()) == releases.r2.validated - releases.r2.valid
    for r in got:
        assert 0 < r["share_of_family_tasks"] <= 1
        assert r["n_rejected_tasks_failed"] <= r["n_tasks_failed"] <= r["n_family_tasks"]
        assert r["is_rejection_reason"] == (r["severity"] == "mandatory")
        if r["is_rejection_reason"]:
            assert r["n_rejected_tasks_failed"] == r["n_tasks_failed"]  # a mandatory failure always rejects
    ranks = defaultdict(list)
    for r in got:
        ranks[r["family"]].append(r["rank_in_family"])
    assert all(sorted(v)[0] == 1 for v in ranks.values())
    # every rejected task has at least one mandatory reason
    (check,) = rows(
        latest_con,
        """
        select count(*) as n from task_status s
        where not s.is_valid and not exists (
            select 1 from stg_validations v where v.task_id = s.task_id and v.is_failure and v.is_mandatory)""",
    )
    assert check["n"] == 0


def test_repair_rescue_by_code_matches_truth(releases, latest_con):
    got = {r["code"]: r for r in rows(latest_con, "select * from repair_rescue_by_code")}
    assert {code: r["n_failed_tasks"] for code, r in got.items()} == dict(releases.r2.failures_by_code)
    for r in got.values():
        assert r["n_rescued"] <= r["n_repaired"] <= r["n_failed_tasks"]
        assert r["rescue_rate"] is None or 0 <= r["rescue_rate"] <= 1
        assert r["code_fix_rate"] is None or 0 <= r["code_fix_rate"] <= 1
        assert r["mean_rescue_round"] is None or 1 <= r["mean_rescue_round"] <= 2
    (overview,) = rows(latest_con, "select n_rescued, n_repair_attempts from release_overview")
    assert overview == {"n_rescued": releases.r2.rescued_parents, "n_repair_attempts": releases.r2.rows["repairs"]}


def test_coverage_grid_is_complete_and_sums(releases, latest_con):
    got = rows(latest_con, "select * from coverage_difficulty_capability")
    assert {(r["capability"], r["difficulty"]) for r in got} == {
        (c, d) for c in CAPABILITIES.names() for d in range(1, 6)
    }
    (expected,) = rows(latest_con, "select sum(n_capabilities) as n from stg_tasks")
    assert sum(r["n_valid"] for r in got) == expected["n"]
    assert sum(r["n_primary_valid"] for r in got) == releases.r2.rows["tasks"]
    for r in got:
        assert r["is_gap"] == (r["n_valid"] == 0)
        assert r["benchmark_group"] == CAPABILITIES.get(r["capability"]).benchmark_group
    by_capability = defaultdict(float)
    for r in got:
        by_capability[r["capability"]] += r["share_of_capability"] or 0
    assert all(abs(v - 1) < 1e-9 or v == 0 for v in by_capability.values())


def test_discrimination_distribution_is_a_histogram(releases, latest_con):
    got = rows(latest_con, "select * from discrimination_distribution")
    per_family = defaultdict(list)
    for r in got:
        per_family[r["family"]].append(r)
    assert set(per_family) == releases.r2.families
    published = {
        r["family"]: r["n"] for r in rows(latest_con, "select family, count(*) as n from stg_tasks group by family")
    }
    for family, bins in per_family.items():
        assert [b["bin"] for b in bins] == list(range(10))
        assert sum(b["n_tasks"] for b in bins) == published[family]
        assert abs(sum(b["share"] for b in bins) - 1) < 1e-9
        assert abs(bins[-1]["cumulative_share"] - 1) < 1e-9
        assert bins[-1]["n_perfect"] <= bins[-1]["n_tasks"]
        assert all(b["n_perfect"] == 0 for b in bins[:-1])


def test_sft_token_counts_match_truth(releases, latest_con):
    got = rows(latest_con, "select * from sft_token_counts")
    assert {r["family"]: r["total_tokens"] for r in got} == releases.r2.sft_tokens_by_family
    assert sum(r["n_examples"] for r in got) == releases.r2.rows["sft"]
    assert abs(sum(r["share_of_tokens"] for r in got) - 1) < 1e-9
    for r in got:
        assert r["median_tokens"] <= r["p90_tokens"] <= r["max_tokens"]
        assert r["n_with_tokens"] <= r["n_examples"]


def test_eval_task_pass_k_is_the_python_metrics_for_every_k(all_con):
    got = rows(all_con, "select n, c, k, pass_at_1, pass_at_k, pass_hat_k from eval_task_pass_k")
    (trials,) = rows(all_con, "select sum(n) as n from eval_task_trials")
    assert len(got) == trials["n"]  # one row per k from 1 to n
    assert {r["k"] for r in got} == set(range(1, EVAL_TRIALS + 1))
    for r in got:
        assert r["pass_at_1"] == r["c"] / r["n"]
        assert r["pass_at_k"] == pytest.approx(pass_at_k(r["n"], r["c"], r["k"]), abs=1e-12)
        assert r["pass_hat_k"] == pytest.approx(pass_hat_k(r["n"], r["c"], r["k"]), abs=1e-12)


def test_the_pass_rate_marts_are_slices_of_eval_group_pass_rates(latest_con):
    counts = {
        r["group_kind"]: r["n"]
        for r in rows(latest_con, "select group_kind, count(*) as n from eval_group_pass_rates group by all")
    }
    (by_capability,) = rows(latest_con, "select count(*) as n from eval_pass_rates")
    (by_group,) = rows(latest_con, "select count(*) as n from eval_pass_rates_by_group")
    assert counts["capability"] == by_capability["n"]
    assert counts["benchmark_group"] + counts["overall"] == by_group["n"]


def test_eval_pass_rates_match_truth_and_the_python_metrics(releases, latest_con):
    got = rows(latest_con, "select * from eval_pass_rates")
    assert {(r["model"], r["capability"]) for r in got} == set(releases.r2.eval_pass)
    per_task = rows(
        latest_con,
        """
        select model, unnest(capabilities) as capability, count(*) as n, count(*) filter (where passed) as c
        from stg_eval_results group by model, task_id, capabilities""",
    )
    expected = defaultdict(list)
    for t in per_task:
        expected[(t["model"], t["capability"])].append(t)
    for r in got:
        trials, passes = releases.r2.eval_pass[(r["model"], r["capability"])]
        assert r["n_trials"] == trials and r["k"] == EVAL_TRIALS
        assert r["pass_at_1"] == pytest.approx(passes / trials)
        tasks = expected[(r["model"], r["capability"])]
        assert r["n_tasks"] == len(tasks)
        assert r["pass_at_k"] == pytest.approx(sum(pass_at_k(t["n"], t["c"], EVAL_TRIALS) for t in tasks) / len(tasks))
        assert r["pass_hat_k"] == pytest.approx(
            sum(pass_hat_k(t["n"], t["c"], EVAL_TRIALS) for t in tasks) / len(tasks)
        )
        assert r["pass_hat_k"] <= r["pass_at_1"] <= r["pass_at_k"]
        assert r["pass_at_1_ci_low"] <= r["pass_at_1"] <= r["pass_at_1_ci_high"]
        assert r["benchmark_group"] == CAPABILITIES.get(r["capability"]).benchmark_group
    models = {
        r["model"]: r
        for r in rows(latest_con, """select model, avg(pass_at_1) as p from eval_pass_rates group by model""")
    }
    assert models["sft-8b"]["p"] > models["base-8b"]["p"]  # the fixture's stronger model


def test_eval_pass_rates_by_group_has_an_overall_row(latest_con):
    got = rows(latest_con, "select * from eval_pass_rates_by_group")
    for model in ("base-8b", "sft-8b"):
        mine = {r["benchmark_group"]: r for r in got if r["model"] == model}
        assert "overall" in mine and set(mine) - {"overall"} <= {"general", "multi_step", "multi_turn"}
        assert mine["overall"]["n_tasks"] == sum(r["n_tasks"] for g, r in mine.items() if g != "overall")
        assert mine["overall"]["n_trials"] == mine["overall"]["n_tasks"] * EVAL_TRIALS


def test_trajectory_outcomes_oracle_passes_and_empty_fails(releases, latest_con):
    got = rows(latest_con, "select * from trajectory_outcomes")
    assert sum(r["n_trajectories"] for r in got) == releases.r2.rows["trajectories"]
    for r in got:
        if r["agent"] == "oracle":
            assert r["pass_rate"] == 1 and r["mean_score"] == 1
        if r["agent"] == "null":
            assert r["pass_rate"] == 0 and r["mean_score"] == 0 and r["mean_tool_calls"] == 0


def test_release_overview_over_all_releases(releases, all_con):
    got = rows(all_con, "select * from release_overview")
    assert [r["release_id"] for r in got] == [releases.r1.release_id, releases.r2.release_id]
    r1, r2 = got
    assert (r1["is_latest"], r2["is_latest"], r2["parent"]) == (False, True, releases.r1.release_id)
    for r, truth in ((r1, releases.r1), (r2, releases.r2)):
        assert r["n_trajectories"] == truth.rows["trajectories"]
        assert r["n_sft_examples"] == truth.rows["sft"] and r["sft_tokens"] == truth.sft_tokens
        assert r["n_valid"] == truth.valid and r["n_tasks"] == truth.validated
    manifests = {
        r["release_id"]: json.loads(r["row_counts"])
        for r in rows(all_con, "select release_id, row_counts::varchar as row_counts from stg_releases")
    }
    assert manifests[releases.r2.release_id] == releases.r2.rows
    families = rows(
        all_con, f"select distinct family from stg_trajectories where release_id = '{releases.r2.release_id}'"
    )
    assert {r["family"] for r in families} == releases.r2.families


def test_marts_keep_releases_apart(releases, all_con, latest_con):
    latest = rows(latest_con, "select family, n_tasks, valid_share from valid_share_by_family order by family")
    r1_id, r2_id = releases.r1.release_id, releases.r2.release_id
    both = rows(
        all_con,
        f"select family, n_tasks, valid_share from valid_share_by_family where release_id = '{r2_id}' order by family",
    )
    assert latest == both
    r1 = {
        r["family"]: (r["n_tasks"], r["n_valid"])
        for r in rows(all_con, f"select * from valid_share_by_family where release_id = '{r1_id}'")
    }
    assert r1 == releases.r1.valid_by_family

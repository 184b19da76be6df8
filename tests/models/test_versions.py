"""The model registry (`coworkenv.models.versions`) with real checkpoints (the tiny model, and copies of it shaped like
a training job's output) and real published evaluations: versions, refs, lineage, recorded evaluations, refusals."""

from __future__ import annotations

import filecmp
import json
import shutil
import threading
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.models import current_model, get_model, list_models, record_eval, register_model
from coworkenv.models.store import CURRENT_FILE, ENTRY_FILE
from tests.models.conftest import evaluation_of, trained


def test_a_checkpoint_is_copied_in_whole_with_its_entry(root, tiny_model_dir):
    entry = register_model(tiny_model_dir, "cw", data_root=root)
    folder = root / "models" / "cw" / "v0001"
    assert (entry.ref, entry.version, entry.status, entry.job, entry.path) == (
        "cw:v1",
        1,
        "candidate",
        "tiny",
        str(folder),
    )
    assert entry.parent is None and entry.base_model is None and entry.training_release is None and entry.evals == []
    assert entry.config["hidden_size"] == 64  # the tiny model's shape, from its card
    assert entry.created_at.endswith("Z")
    copied = sorted(p.name for p in folder.iterdir())
    assert copied == sorted([*(p.name for p in tiny_model_dir.iterdir()), ENTRY_FILE])
    _, mismatch, errors = filecmp.cmpfiles(
        tiny_model_dir, folder, [p.name for p in tiny_model_dir.iterdir()], shallow=False
    )
    assert mismatch == errors == []
    stored = json.loads((folder / ENTRY_FILE).read_text(encoding="utf-8"))
    assert "path" not in stored and stored["name"] == "cw" and stored["status"] == "candidate"  # a data root can move
    assert get_model("cw:v1", root) == entry and list_models(root) == [entry]
    assert current_model("cw", root) is None and not (root / "models" / "cw" / CURRENT_FILE).exists()


def test_the_registered_checkpoint_loads_with_transformers(root, tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    entry = register_model(tiny_model_dir, "cw", data_root=root)
    model = AutoModelForCausalLM.from_pretrained(entry.path, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(entry.path, local_files_only=True)
    assert model.num_parameters() == json.loads((tiny_model_dir / "coworkenv_model.json").read_text())["parameters"]
    assert tokenizer.chat_template


def test_versions_and_refs(root, tiny_model_dir):
    for _ in range(3):
        register_model(tiny_model_dir, "cw", data_root=root)
    register_model(tiny_model_dir, "other", data_root=root)
    assert [(e.name, e.version) for e in list_models(root)] == [("cw", 1), ("cw", 2), ("cw", 3), ("other", 1)]
    assert [e.ref for e in list_models(root, "cw")] == ["cw:v1", "cw:v2", "cw:v3"] and list_models(root, "nobody") == []
    assert get_model("cw", root).ref == get_model("cw:latest", root).ref == "cw:v3"  # no current version: the newest
    assert get_model("cw:2", root).ref == get_model("cw:v2", root).ref == get_model("cw:v0002", root).ref == "cw:v2"
    (root / "models" / "cw" / CURRENT_FILE).write_text("2\n")
    assert get_model("cw", root).ref == get_model("cw:current", root).ref == current_model("cw", root).ref == "cw:v2"
    assert get_model("cw:latest", root).ref == "cw:v3"
    assert [e.status for e in list_models(root, "cw")] == ["candidate", "current", "candidate"]


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("cw:v9", "cw has no version v9 (versions: v1–v1)"),
        ("nobody", "no model named 'nobody'"),
        ("cw:current", "no current version"),
        ("cw:v0", "after ':'"),
        ("cw:best", "after ':'"),
        ("", "empty"),
        ("a/b", "model name"),
        ("../cw", "model name"),
    ],
)
def test_bad_refs_are_one_line_errors(root, tiny_model_dir, ref, needle):
    register_model(tiny_model_dir, "cw", data_root=root)
    with pytest.raises(CoworkEnvError) as refused:
        get_model(ref, root)
    assert needle in str(refused.value) and "\n" not in str(refused.value)


def test_lineage_comes_from_training_json_and_the_parent_from_its_base_model(root, tiny_model_dir, tmp_path):
    base = register_model(tiny_model_dir, "cw", data_root=root)
    sft = register_model(trained(tmp_path / "sft", tiny_model_dir, base=base.path), "cw", data_root=root)
    assert (sft.job, sft.base_model, sft.parent, sft.training_release) == ("sft", base.path, "cw:v1", "r-train-0001")
    assert sft.code_version == "0.1.0+gabc1234" and sft.config == {"model": base.path, "max_steps": 6}
    # trained from the registered v2 under another name, with the path spelled differently: still its parent
    spelled = str(root / "models" / "cw" / ".." / "cw" / "v0002")
    grpo = register_model(trained(tmp_path / "grpo", tiny_model_dir, base=spelled, job="grpo"), "cw-rl", data_root=root)
    assert (grpo.job, grpo.parent) == ("grpo", "cw:v2")
    # from the folder a version was registered from (the README's walk: train models/tiny, register both): the version
    # with those weights, the name's newest (here v1 and v2 both hold the tiny model's weights)
    outside = trained(tmp_path / "dpo", tiny_model_dir, base=tiny_model_dir, job="dpo")
    assert register_model(outside, "cw", data_root=root).parent == "cw:v2"
    # from a folder no version came from: no parent unless named
    elsewhere = trained(tmp_path / "gone", tiny_model_dir, base=tmp_path / "nowhere", job="dpo")
    assert register_model(elsewhere, "cw", data_root=root).parent is None
    assert register_model(elsewhere, "cw", data_root=root, parent="cw:v1").parent == "cw:v1"
    assert register_model(elsewhere, "cw", data_root=root, parent="cw").parent == "cw:v5"  # "cw": the newest then


def test_an_rl_record_naming_its_method_and_an_external_checkpoint(root, tiny_model_dir, tmp_path):
    rl = trained(tmp_path / "rl", tiny_model_dir, base=tiny_model_dir, job="rl", method="gdpo")
    assert register_model(rl, "cw", data_root=root).job == "gdpo"
    external = shutil.copytree(tiny_model_dir, tmp_path / "external")
    (external / "coworkenv_model.json").unlink()
    entry = register_model(external, "cw", data_root=root)
    assert (entry.job, entry.config, entry.base_model) == ("external", {}, None)


def test_bad_registrations_are_refused_before_anything_is_written(root, tiny_model_dir, tmp_path):
    def refused(checkpoint, name="cw", data_root=root, **kwargs) -> str:
        with pytest.raises(CoworkEnvError) as caught:
            register_model(checkpoint, name, data_root=data_root, **kwargs)
        assert "\n" not in str(caught.value)
        return str(caught.value)

    assert "not a model checkpoint (no config.json)" in refused(tmp_path)
    assert "no such checkpoint folder" in refused(tmp_path / "missing")
    assert "model name" in refused(tiny_model_dir, "cw:v1") and "model name" in refused(tiny_model_dir, ".hidden")
    assert "needs a local" in refused(tiny_model_dir, data_root="memory://registry")
    assert "no model named 'nobody'" in refused(tiny_model_dir, parent="nobody")
    bad_job = trained(tmp_path / "bad", tiny_model_dir, base=tiny_model_dir, job="distill")
    assert "job 'distill' is not a training job" in refused(bad_job)
    assert not (root / "models").exists()
    holder = tmp_path / "holder"  # a checkpoint folder that holds the data root: copying it would copy itself
    shutil.copytree(tiny_model_dir, holder)
    assert "holds the registry itself" in refused(holder, data_root=holder / "data")


def test_a_folder_that_is_not_a_loadable_checkpoint_is_refused(root, tiny_model_dir, tmp_path):
    def refused(checkpoint) -> str:
        with pytest.raises(CoworkEnvError) as caught:
            register_model(checkpoint, "m", data_root=root)
        assert "\n" not in str(caught.value)
        return str(caught.value)

    def bare(name: str, config: str):  # the audit's folders: a config.json and nothing else
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(config, encoding="utf-8")
        return tmp_path / name

    def without(name: str, *files: str):
        checkpoint = shutil.copytree(tiny_model_dir, tmp_path / name)
        for file in files:
            (checkpoint / file).unlink()
        return checkpoint

    assert "config.json: not valid JSON" in refused(bare("broken", "{bad"))
    assert "not a JSON object with a model_type" in refused(bare("empty", "{}"))
    assert "no weights" in refused(without("no-weights", "model.safetensors"))
    assert "no tokenizer" in refused(without("no-tokenizer", "tokenizer.json", "tokenizer_config.json"))
    assert not (root / "models").exists()
    assert register_model(tiny_model_dir, "m", data_root=root).ref == "m:v1"  # the refusals took no version


def test_concurrent_registrations_get_distinct_versions(root, tiny_model_dir):
    errors: list[BaseException] = []

    def register() -> None:
        try:
            register_model(tiny_model_dir, "cw", data_root=root)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=register) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and [e.version for e in list_models(root, "cw")] == [1, 2, 3, 4]
    assert sorted(p.name for p in (root / "models" / "cw").iterdir()) == [".lock", "v0001", "v0002", "v0003", "v0004"]


def test_an_evaluation_is_recorded_with_the_summary_of_its_report(root, evals, tiny_model_dir):
    from coworkenv.pipeline.evaluation import summary_of
    from coworkenv.pipeline.rundir import RunDir

    v1 = Path(register_model(tiny_model_dir, "cw", data_root=root).path)
    random_of_v1, oracle_of_v1 = evaluation_of(root, evals["random"], v1), evaluation_of(root, evals["oracle"], v1)
    entry = record_eval("cw", "eval-random-of-cw-v0001", root)  # the run id that published it
    (record,) = entry.evals
    assert (record.release_id, record.run_id, record.agent) == (random_of_v1, "eval-random-of-cw-v0001", "hf:v0001")
    assert (record.suite, record.suite_release, record.suite_key) == (
        "suite8",
        None,
        "suite8",
    )  # a file suite: no release
    report = summary_of(RunDir.open("eval-random", root))
    assert record.summary == report["overall"]  # the same figures, intervals included, as the rows' run's summary.json
    assert 0.0 < record.mean_safety < 1.0  # the random agent breaks some safety rules
    assert get_model("cw:v1", root) == entry
    again = record_eval("cw:v1", random_of_v1, root)  # by release id: replaces the record, not a second one
    assert [e.release_id for e in again.evals] == [random_of_v1]
    both = record_eval("cw:v1", oracle_of_v1, root)
    assert [e.release_id for e in both.evals] == [random_of_v1, oracle_of_v1]
    assert (
        both.newest_eval().summary["mean_score"] == {"value": 1.0, "lo": 1.0, "hi": 1.0}
        and both.newest_eval().mean_safety == 1.0
    )
    assert both.newest_eval("suite8").release_id == oracle_of_v1 and both.newest_eval("bench") is None


def test_only_published_evaluations_are_recorded(root, evals, tiny_model_dir):
    from coworkenv.data.build import release_tables
    from coworkenv.data.publisher import publish_release
    from tests.support.releases import passing_validation
    from tests.support.suites import example_tasks

    register_model(tiny_model_dir, "cw", data_root=root)
    tasks = example_tasks()[:1]
    training = publish_release(
        release_tables(tasks, [passing_validation(t) for t in tasks]),
        data_root=root,
        run_id="train-1",
        parent=None,
        config={},
    )
    for ref, needle in [
        ("no-such-eval", "not a published evaluation"),
        (training.release_id, "is a tasks release, not an evaluation"),
        ("", "empty"),
        ("../x", "not a published evaluation"),
    ]:
        with pytest.raises(CoworkEnvError) as refused:
            record_eval("cw", ref, root)
        assert needle in str(refused.value)
    with pytest.raises(CoworkEnvError, match="no model named 'nobody'"):
        record_eval("nobody", evals["oracle"], root)
    with pytest.raises(CoworkEnvError, match="not of a checkpoint"):
        record_eval("cw", evals["oracle"], root)
    assert get_model("cw", root).evals == []


def test_current_is_what_CURRENT_names_even_after_an_interrupted_promotion(root, tiny_model_dir):
    """A promotion writes the entries, then CURRENT: cut in between, the registry still reads as before it."""
    register_model(tiny_model_dir, "cw", data_root=root)
    register_model(tiny_model_dir, "cw", data_root=root)
    (root / "models" / "cw" / CURRENT_FILE).write_text("1\n")
    entry_file = root / "models" / "cw" / "v0002" / ENTRY_FILE
    entry_file.write_text(entry_file.read_text().replace('"candidate"', '"current"'))  # written before the cut
    assert [e.status for e in list_models(root, "cw")] == ["current", "candidate"] and current_model(
        "cw", root
    ).version == 1
    (root / "models" / "cw" / CURRENT_FILE).write_text("seven\n")
    with pytest.raises(CoworkEnvError, match="not a version number"):
        current_model("cw", root)


def test_listing_reads_through_the_data_root_filesystem(root, tiny_model_dir):
    """Only writing needs a local root: a registry copied to any fsspec root lists and resolves the same."""
    import fsspec

    register_model(tiny_model_dir, "cw", data_root=root)
    fs = fsspec.filesystem("memory")
    for path in (root / "models").rglob("*"):
        if path.is_file() and path.name in (ENTRY_FILE, CURRENT_FILE):
            fs.pipe_file(f"/copy/{path.relative_to(root)}", path.read_bytes())
    (entry,) = list_models("memory://copy")
    assert (entry.ref, entry.path, entry.job) == ("cw:v1", "memory:///copy/models/cw/v0001", "tiny")
    assert get_model("cw", "memory://copy") == entry

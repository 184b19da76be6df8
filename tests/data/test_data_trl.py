"""A release's `sft` table, loaded with `datasets` from its Parquet files, goes into TRL's SFTTrainer as it is."""

from __future__ import annotations

import json
import math

import pytest

from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import table_files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning"),
]


def test_sft_table_trains_two_steps(tmp_path, tables):
    import datasets
    from trl import SFTConfig, SFTTrainer

    from tests.support.tiny_model import build_tiny

    publish_release(tables, data_root=str(tmp_path / "data"), run_id="trl-run", parent=None, config={})
    train = datasets.load_dataset(
        "parquet",
        data_files=table_files(tmp_path / "data", "latest", "sft"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert train.num_rows == tables["sft"].num_rows

    model, tokenizer = build_tiny(train)
    # the chat template renders the rows with their tools (TRL parses the JSON string) and tool calls
    rendered = tokenizer.apply_chat_template(train[0]["messages"], tools=json.loads(train[0]["tools"]), tokenize=False)
    assert "<tools>" in rendered and "<tool_call>" in rendered and "<tool_response>" in rendered
    # the tokenizer survives a save/load round trip with the same ids
    from transformers import AutoTokenizer

    tokenizer.save_pretrained(tmp_path / "tok")
    assert AutoTokenizer.from_pretrained(tmp_path / "tok")(rendered)["input_ids"] == tokenizer(rendered)["input_ids"]

    args = SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=2,
        per_device_train_batch_size=2,
        max_length=512,
        bf16=False,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        dataloader_num_workers=0,
        use_cpu=True,
        seed=0,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=tokenizer)
    result = trainer.train()
    assert trainer.state.global_step == 2
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), trainer.state.log_history
    assert math.isfinite(result.training_loss)

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

from claw_eval.graders.base import AbstractGrader


def get_grader(task_id: str, tasks_dir: str | Path = "tasks", task_dir: str | Path | None = None) -> AbstractGrader:
    path = Path(task_dir) / "grader.py" if task_dir is not None else Path(tasks_dir) / task_id / "grader.py"
    spec = importlib.util.spec_from_file_location(f"task_grader_{task_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if obj.__module__ == module.__name__ and issubclass(obj, AbstractGrader):
            return obj()
    raise ValueError(f"no grader in {path}")

"""Progress lines for output that is not a terminal: their format, how often they come, the final and `stopped`
lines, and the logged ones a stage writes when it gets no callback. A fake clock: nothing sleeps."""

from __future__ import annotations

import logging

import pytest

from coworkenv.progress import ProgressLines, duration, given_or_logged, logged, progress_in, progress_lines, rate_text


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines_of(what: str = "playing", total: int | None = None, **options):
    clock, out = Clock(), []
    return ProgressLines(what, total, write=out.append, clock=clock, **options), clock, out


def test_durations_and_rates_read_as_a_person_reads_them():
    assert [duration(s) for s in (0, 4.4, 65, 754, 3600, 3725.6)] == [
        "0:00",
        "0:04",
        "1:05",
        "12:34",
        "1:00:00",
        "1:02:06",
    ]
    assert rate_text(123.4) == "123/s" and rate_text(2.345) == "2.3/s" and rate_text(1.0) == "1.0/s"
    assert rate_text(0.08, "trial") == "12.5 s/trial" and rate_text(1 / 250, "step") == "250 s/step"


def timed_lines(what: str = "playing", total: int | None = None, **options):
    """ProgressLines whose lines are kept with the fake time they were written at."""
    clock, out = Clock(), []
    return (
        ProgressLines(what, total, write=lambda line: out.append((clock.now - 1000.0, line)), clock=clock, **options),
        clock,
        out,
    )


def test_a_slow_job_writes_a_line_every_half_minute_and_at_each_tenth_with_its_rate_and_time_left():
    progress, clock, out = timed_lines(total=100, unit="trial")
    for _ in range(100):  # one trial every 12 s: 20 minutes
        clock.now += 12
        progress()
    times = [t for t, _ in out]
    gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    assert max(gaps) <= 30 + 12 and min(gaps) >= 5  # half a minute at most (and a report), 5 s at least
    assert all(any(f"{k}/100 ({k}%)" in line for _, line in out) for k in range(10, 101, 10))  # every tenth
    assert out[0] == (36, "playing: 3/100 (3%), 12.0 s/trial, ETA 19:24")
    assert out[-1] == (1200, "playing: 100/100 (100%), 12.0 s/trial, done in 20:00")
    assert len(out) == 40
    progress.finish()  # the final line is not written twice
    assert len(out) == 40


def test_a_quick_job_writes_a_line_per_tenth_at_most_every_five_seconds():
    progress, clock, out = timed_lines("validating", 640, unit="task")
    for _ in range(640):  # 32 tasks a second: 20 s
        clock.now += 1 / 32
        progress()
    # a tenth is done every 2 s, but lines come at least 5 s apart
    assert [line.split(",")[0] for _, line in out] == [
        "validating: 160/640 (25%)",
        "validating: 320/640 (50%)",
        "validating: 480/640 (75%)",
        "validating: 640/640 (100%)",
    ]
    assert [t for t, _ in out] == [5, 10, 15, 20]
    assert (
        out[0][1] == "validating: 160/640 (25%), 32.0/s, ETA 0:15"
        and out[-1][1] == "validating: 640/640 (100%), 32.0/s, done in 0:20"
    )


def test_a_job_that_ends_at_once_writes_one_final_line():
    progress, clock, out = lines_of("checking tasks", 3)
    for _ in range(3):
        clock.now += 0.1
        progress()
    assert out == ["checking tasks: 3/3 (100%), 10.0/s, done in 0:00"]


def test_without_a_total_done_and_rate_only_every_half_minute_and_the_final_line_at_finish():
    progress, clock, out = lines_of("importing tasks", unit="task")
    for _ in range(280):  # 4 a second
        clock.now += 0.25
        progress()
    assert out == ["importing tasks: 120, 4.0/s", "importing tasks: 240, 4.0/s"]
    progress.finish()
    assert out[-1] == "importing tasks: 280, 4.0/s, done in 1:10"


def test_a_total_set_late_and_the_rate_counted_from_the_first_report():
    progress, clock, out = lines_of("playing", unit="trial")
    clock.now += 600  # loading a model, checking the suite: no work done yet
    progress(total=20)
    progress(8)  # trials a killed run had finished, reported at once: no rate yet
    assert out == ["playing: 8/20 (40%)"]
    for _ in range(12):
        clock.now += 10
        progress()
    # the 8 resumed trials and the 600 s before them do not count in the rate: 10 s per trial
    assert out[1] == "playing: 10/20 (50%), 10.0 s/trial, ETA 1:40"
    # the final line: the 12 trials played over the whole 12 minutes
    assert out[-1] == "playing: 20/20 (100%), 60.0 s/trial, done in 12:00"


def test_the_first_report_alone_has_no_rate_yet():
    # a batch engine's first trial comes with 15 others after a minute of loading: its time is no trial's time
    progress, clock, out = lines_of("playing", 144, unit="trial")
    clock.now += 40
    progress()
    for _ in range(15):
        progress()
    clock.now += 31
    progress()
    assert out == ["playing: 1/144 (0%)", "playing: 17/144 (11%), 1.9 s/trial, ETA 4:06"]


def test_a_failure_after_some_lines_writes_a_stopped_line_and_one_at_once_writes_nothing():
    clock, out = Clock(), []
    with (
        pytest.raises(RuntimeError),
        progress_lines("playing", 10, write=out.append, clock=clock, unit="trial") as progress,
    ):
        clock.now += 40
        progress()
        clock.now += 5
        raise RuntimeError("the model fell over")
    assert out == ["playing: 1/10 (10%)", "playing: 1/10 (10%), 45.0 s/trial, stopped after 0:45"]
    out.clear()
    with pytest.raises(RuntimeError), progress_lines("playing", 10, write=out.append, clock=clock):
        raise RuntimeError("bad settings")  # the command's error stays its only line
    assert out == []
    with progress_lines("playing", 0, write=out.append, clock=clock):
        pass
    assert out == ["playing: 0/0 (100%), done in 0:00"]


def test_a_stage_without_a_callback_logs_its_lines_and_one_with_a_callback_uses_it(caplog):
    caplog.set_level(logging.INFO, logger="coworkenv.progress")
    seen = []
    with given_or_logged(seen.append, "trials", 4) as step:
        step(2)
    assert seen == [2] and not caplog.records
    with given_or_logged(None, "trials", 2, unit="trial") as step:
        step()
        step()
    [record] = caplog.records
    assert record.name == "coworkenv.progress" and record.levelno == logging.INFO
    assert record.getMessage().startswith("trials: 2/2 (100%), ") and ", done in 0:00" in record.getMessage()
    caplog.clear()
    with logged()("training sft", 3, unit="step") as step:
        step(3)
    assert [r.getMessage().split(",")[0] for r in caplog.records] == ["training sft: 3/3 (100%)"]


def test_a_parent_finds_the_progress_lines_in_a_childs_log():
    """`make demo` writes `airflow dags test`'s output to a file and passes on only the progress lines: every line
    `ProgressLines` writes (with a rate, ETA, done or stopped) is found behind any logger prefix, and nothing else is."""
    clock = Clock()
    lines: list[str] = []
    with pytest.raises(RuntimeError):
        with progress_lines("baseline trials", 40, write=lines.append, clock=clock, unit="trial") as step:
            for _ in range(30):
                clock.now += 7.3
                step()
            raise RuntimeError
    with progress_lines("training", 200, write=lines.append, clock=clock, unit="step") as step:
        for _ in range(200):
            clock.now += 0.4
            step()
    with_rate = [line for line in lines if "/s" in line or "s/" in line]
    assert (
        len(with_rate) >= 5
        and any("stopped after" in line for line in with_rate)
        and any("done in" in line for line in with_rate)
    )
    for line in with_rate:
        for prefix, suffix in (
            ("", ""),
            ("[2026-12-05T13:00:01.123+0000] {progress.py:180} INFO - ", ""),
            ("2026-12-05T14:02:44.545589Z [info     ] ", " [coworkenv.progress] loc=progress.py:199"),
        ):  # Airflow 3's
            assert progress_in(prefix + line + suffix + "\n") == line
    for other in (
        "Marking task as SUCCESS. dag_id=coworkenv_nightly, task_id=train",
        "publish: r-s1-e8bc163c",
        "tasks 6, valid 6",
        "error: x.json: checks.0.weight: 3/4 (75%)",
        "importing tasks: 310, 95.2/s",
    ):
        assert progress_in(other) is None


def test_a_failed_demo_step_says_why_not_only_where_the_log_is(tmp_path):
    """`make demo` keeps Airflow's output in a log; when a DAG run fails it prints the log's last error lines (the task's
    exception, Airflow's error records) after the log's path, so a piped or CI run shows the cause."""
    from rich.console import Console

    from coworkenv.cli.demo import _failed

    log = tmp_path / "demo.log"
    log.write_text(
        "2026-12-05T19:18:14Z [info     ] Task started [airflow.task]\nTraceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\ncoworkenv.errors.CoworkEnvError: suite r-x: no such release\n'
        "2026-12-05T19:18:15Z [error    ] Task failed with exception [airflow.task]\n"
    )
    console = Console(record=True, width=80)
    assert _failed(console, "the nightly loop", log).exit_code == 1
    shown = console.export_text()
    assert f"the nightly loop failed; full log: {log}" in shown.replace("\n", "")
    assert (
        "CoworkEnvError: suite r-x: no such release" in shown
        and "Task failed with exception" in shown
        and "Task started" not in shown
    )

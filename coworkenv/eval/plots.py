"""The report's PNG plots (docs/design/evaluation.md, "Evaluation metrics and reports"), rendered to bytes with matplotlib's
Agg canvas: no display, no pyplot global state, and no version stamp in the file, so the same figures give the same
bytes. matplotlib is imported inside the functions (it is slow to import)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from coworkenv.eval.compare import Comparison
from coworkenv.eval.metrics import Stats

_BASE, _CAND, _PASS = "#8c96a6", "#2b6cb0", "#d97706"


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Any) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _errors(metrics: Sequence[Any]) -> list[list[float]]:
    return [[max(m.value - m.lo, 0.0) for m in metrics], [max(m.hi - m.value, 0.0) for m in metrics]]


def stats_bars(title: str, stats: dict[Any, Stats], *, label: str = "") -> bytes:
    """Mean score and pass rate per slice, with their confidence intervals as error bars."""
    import numpy as np

    names = [str(name) for name in stats]
    x = np.arange(len(names))
    fig = _figure(max(5.0, 0.9 * len(names) + 2.0), 3.6)
    ax = fig.add_subplot()
    width = 0.38
    for offset, metric, colour, legend in (
        (-width / 2, "mean_score", _CAND, "mean score"),
        (width / 2, "pass_rate", _PASS, "pass rate"),
    ):
        figures = [getattr(s, metric) for s in stats.values()]
        ax.bar(
            x + offset, [m.value for m in figures], width, yerr=_errors(figures), capsize=3, color=colour, label=legend
        )
    ax.set_xticks(x, names, rotation=30 if len(names) > 4 else 0, ha="right" if len(names) > 4 else "center")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(label)
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def score_histogram(scores: Sequence[float], task_means: Sequence[float], *, threshold: float) -> bytes:
    """Scores of every trial and mean score of every task, with the pass threshold."""
    import numpy as np

    fig = _figure(6.0, 3.4)
    ax = fig.add_subplot()
    bins = np.linspace(0.0, 1.0, 21)
    ax.hist(np.clip(scores, 0.0, 1.0), bins=bins, color=_CAND, alpha=0.75, label="trial score")
    ax.hist(np.clip(task_means, 0.0, 1.0), bins=bins, color=_PASS, alpha=0.6, label="task mean score")
    ax.axvline(threshold, color="black", linestyle="--", linewidth=1, label=f"pass ≥ {threshold:g}")
    ax.set_xlabel("score")
    ax.set_ylabel("count")
    ax.set_title("Score distribution")
    ax.legend(fontsize=8)
    return _png(fig)


def comparison_bars(comparison: Comparison) -> bytes:
    """Base against candidate mean score, overall and per capability, each labelled with its delta's p-value."""
    import numpy as np

    slices = {"overall": comparison.overall, **comparison.capabilities}
    names = list(slices)
    x = np.arange(len(names))
    fig = _figure(max(5.0, 0.9 * len(names) + 2.0), 3.8)
    ax = fig.add_subplot()
    width = 0.38
    ax.bar(
        x - width / 2,
        [s.mean_score.base for s in slices.values()],
        width,
        color=_BASE,
        label=comparison.base_agent or "base",
    )
    ax.bar(
        x + width / 2,
        [s.mean_score.candidate for s in slices.values()],
        width,
        color=_CAND,
        label=comparison.candidate_agent or "candidate",
    )
    for i, s in enumerate(slices.values()):
        top = max(s.mean_score.base, s.mean_score.candidate)
        ax.annotate(
            f"{round(s.mean_score.value, 2) + 0.0:+.2f}\np={s.mean_score.p_value:.2g}",
            (x[i], min(top, 1.0) + 0.02),
            ha="center",
            fontsize=7,
        )
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylim(0, 1.35)
    ax.set_ylabel("mean score")
    ax.set_title("Base vs candidate per capability (Δ and sign-flip p)")
    ax.legend(loc="upper center", ncols=2, fontsize=8)  # above the bars and their labels (scores are ≤ 1)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)

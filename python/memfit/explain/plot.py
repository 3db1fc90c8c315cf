"""The before/after memory timeline of a split (memfit.explain.split.SplitReport).

Two panels, one per program (their schedules differ in length, and the
program before the split is often 20x over the limit, which would flatten
the one after on a shared axis): bytes live at each op of memfit's schedule
(nested loop bodies included, as memfit-profile walks them), the limit as a
dashed line, the ops of each loop memfit-split made shaded.
"""
from __future__ import annotations

MIB = 2.0 ** 20
LOOP_COLOURS = ("tab:green", "tab:orange", "tab:purple", "tab:brown", "tab:pink")


def _spans(timeline: list[dict], step: int) -> list[tuple[int, int]]:
    """Runs of consecutive timeline indices that belong to loop ``step``."""
    spans: list[tuple[int, int]] = []
    for i, point in enumerate(timeline):
        if point.get("split_step", -1) != step:
            continue
        if spans and spans[-1][1] == i - 1:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    return spans


def _panel(ax, profile, label: str, colour: str, limit: int) -> None:
    from .report import format_bytes
    y = [p["live_bytes"] / MIB for p in profile.timeline]
    ax.step(range(len(y)), y, where="mid", color=colour, linewidth=1.5,
            label=f"{label}: peak {format_bytes(profile.peak_bytes)}")
    ax.axhline(limit / MIB, color="tab:red", linestyle="--", linewidth=1.2,
               label=f"limit {format_bytes(limit)}")
    ax.set_ylabel("MiB live")
    ax.xaxis.get_major_locator().set_params(integer=True)  # x counts ops
    ax.set_xlim(-0.5, max(len(y), 1) - 0.5)
    ax.set_ylim(bottom=0)


def _shade_loops(ax, report) -> None:
    for k, loop in enumerate(report.loops):
        colour = LOOP_COLOURS[k % len(LOOP_COLOURS)]
        label = (f"loop {loop.step}: dim {loop.dim} of {loop.seed_type}, "
                 f"{loop.chunks} x {loop.chunk}"
                 + (f" + {loop.remainder}" if loop.remainder else ""))
        for n, (a, b) in enumerate(_spans(report.after.timeline, loop.step)):
            ax.axvspan(a - 0.5, b + 0.5, color=colour, alpha=0.18, linewidth=0,
                       label=label if n == 0 else None)


def plot_split(report, path: str | None = None, *, dpi: int = 100):
    """Draws ``report`` (and saves it to ``path`` as PNG); returns the Figure.
    Headless: a bare Figure on the Agg canvas, no pyplot state."""
    from .._optional import matplotlib_agg, require
    matplotlib_agg("the split plot")
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    fig = Figure(figsize=(9, 6), layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1)
    _panel(top, report.before, "before", "tab:blue", report.memory_limit)
    top.set_title(f"@{report.function}: bytes live at each op, memory limit "
                  f"{report.memory_limit / MIB:.4g} MiB")
    if report.after is not None:
        _panel(bottom, report.after, "after memfit", "tab:green", report.memory_limit)
        _shade_loops(bottom, report)
        bottom.set_xlabel("op, in memfit's schedule (loop bodies included)")
    else:
        reach = report.smallest_reachable
        bottom.text(0.5, 0.5, "memfit cannot fit this limit"
                    + (f"; smallest reachable: {reach / MIB:.4g} MiB" if reach else ""),
                    ha="center", va="center", transform=bottom.transAxes)
        bottom.set_axis_off()
    for ax in (top, bottom):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=8)
    if path:
        fig.savefig(path, dpi=dpi)
    return fig

"""Plots of an assignment: time x address rectangles, and fast-memory bytes over time."""
from __future__ import annotations

from ..core.instance import Instance
from ..core.model import resolve
from ..core.solution import Solution
from ..core.validator import validate



def _resolved(inst, sol):
    """(buffer, assignment, placement) for each buffer the solution places.
    Assignments that do not resolve (an invalid solution, which the plot's
    title already marks INVALID) are left out of the picture."""
    by = sol.by_id()
    out = []
    for b in inst.buffers:
        a = by.get(b.id)
        if a is None:
            continue
        try:
            out.append((b, a, resolve(inst, a)))
        except (IndexError, TypeError, ValueError):
            continue
    return out

def plot_assignment(inst: Instance, sol: Solution | None, path: str) -> None:
    from ..._optional import matplotlib_agg, require
    matplotlib_agg("memfit plot")
    plt = require("matplotlib.pyplot")
    Rectangle = require("matplotlib.patches").Rectangle

    T = inst.num_ops
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), height_ratios=[3, 2])
    ax, ax2 = axes
    cmap = plt.get_cmap("tab20")

    # before: bytes live per op if everything were in fast memory
    live_all = [0] * T
    for b in inst.buffers:
        for t in range(b.start, b.end + 1):
            live_all[t] += b.size
    live = [0] * T
    title = f"{inst.program} ({inst.mode}, capacity {inst.capacity} B)"
    if sol is not None:
        v = validate(inst, sol)
        title += (f"\n{sol.method}: {'valid' if v.valid else 'INVALID'}"
                  + (f", estimated {v.estimated_time:.4g} s vs all-slow {v.all_slow_time:.4g} s"
                     if v.estimated_time is not None else ""))
        placed = _resolved(inst, sol)
        for b, a, pl in placed:
            for lo, hi in pl.intervals():
                for t in range(lo, hi + 1):
                    live[t] += b.size
            if inst.mode == "placement" and a.offset is not None:
                for lo, hi in pl.intervals():
                    ax.add_patch(Rectangle((lo - 0.5, a.offset), hi - lo + 1, b.size,
                                           facecolor=cmap(b.id % 20), edgecolor="k", lw=0.5, alpha=0.8))
                    ax.text(lo - 0.4, a.offset + b.size / 2, b.name, fontsize=6, va="center")
                for (s, u, _r) in pl.windows:
                    ax.annotate("", xy=(u - 0.5, a.offset + b.size / 2),
                                xytext=(s - 0.5, a.offset + b.size / 2),
                                arrowprops=dict(arrowstyle="->", lw=0.6))
        if inst.mode == "offload":
            # no offsets: draw resident buffers stacked per op (a bar chart by buffer)
            base = [0] * T
            for b, a, pl in placed:
                for lo, hi in pl.intervals():
                    for t in range(lo, hi + 1):
                        ax.add_patch(Rectangle((t - 0.5, base[t]), 1, b.size,
                                               facecolor=cmap(b.id % 20), edgecolor="none", alpha=0.8))
                        base[t] += b.size
    ax.axhline(inst.capacity, color="r", lw=1, ls="--", label="capacity")
    ax.set_xlim(-0.5, T - 0.5)
    ax.set_ylim(0, max(inst.capacity, max(live, default=0)) * 1.05 + 1)
    ax.set_xlabel("op (schedule position)")
    ax.set_ylabel("fast-memory address (bytes)" if inst.mode == "placement" else "resident bytes")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right", fontsize=7)

    ax2.step(range(T), live_all, where="mid", label="before: all buffers live (no assignment)")
    if sol is not None:
        ax2.step(range(T), live, where="mid", label="after: resident in fast memory")
    ax2.axhline(inst.capacity, color="r", lw=1, ls="--", label="capacity")
    ax2.set_xlabel("op")
    ax2.set_ylabel("bytes")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

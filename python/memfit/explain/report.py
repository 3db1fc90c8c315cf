"""Human-readable memory reports."""
from __future__ import annotations


def format_bytes(n: int) -> str:
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024
    return f"{n} B"


def format_profile_table(report) -> str:
    lines = [
        f"memfit profile of @{report.name}",
        f"  arguments  {format_bytes(report.argument_bytes):>12}",
        f"  outputs    {format_bytes(report.output_bytes):>12}",
        f"  peak       {format_bytes(report.peak_bytes):>12}  at {report.peak_op}"
        + (f" ({report.peak_location})" if report.peak_location else ""),
        "  largest tensors live at the peak:",
    ]
    for t in report.largest_at_peak:
        loc = f"  {t['location']}" if t.get("location") else ""
        lines.append(f"    {format_bytes(t['bytes']):>12}  {t['type']}  {t['value']}{loc}")
    return "\n".join(lines)

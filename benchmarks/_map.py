"""``--only map``: the branch map of a 10,000-entry, 500-branch session (issue 9).

Runs `benchmarks._mapprobe` in a fresh interpreter (offscreen) and prints each worst
event-loop gap beside the 50 ms target and the idle loop's worst gap of the same run.
"""

from __future__ import annotations

from typing import Any

from benchmarks._gui import run_probe
from benchmarks._report import Report

GAP_TARGET_MS = 50.0


def bench_map(report: Report) -> None:
    report.section(
        "Branch map: 10,000 entries, ~500 branches in MainWindow (offscreen); 10 ms QTimer "
        "probe; baseline: the idle loop's worst gap in the same run"
    )
    r = run_probe("benchmarks._mapprobe")
    print_map(r, report)


def print_map(r: dict[str, Any], report: Report) -> None:
    idle = r["idle"]["max_ms"]
    base = [("idle loop worst gap", idle)]
    report.note(
        f"session: {r['entries']:,} entries, {r['branches']} branches; map: {r['rows']:,} rows, "
        f"{r['lanes']} lanes, {r['tips']} branch tips; written in {r['write_s']:.1f} s"
    )
    report.line(
        "layout alone (Qt-free BranchMap.sync, on the loop)",
        r["layout_ms"],
        "ms",
        baselines=[("touching every entry once", r["touch_ms"])],
        digits=1,
    )
    report.line(
        "layout (in slices on the loop) + model reset + paint", r["build_paint_ms"], "ms", digits=1
    )
    report.note(f"rows painted: {r['rows_painted']} (only the visible ones)")
    report.line("... until the visible rows show their previews", r["previews_ms"], "ms", digits=1)
    report.line(
        "worst loop gap while building and painting", r["build"]["max_ms"], "ms",
        baselines=base, target=GAP_TARGET_MS, digits=1,
    )  # fmt: skip
    median, worst = r["scroll_paint_ms"]
    report.note(
        f"scrolling: {r['scroll_pages']} pages in {r['scroll_s']:.1f} s; a page painted in "
        f"{median:.1f} ms (median), {worst:.1f} ms (worst)"
    )
    report.line(
        "worst loop gap while scrolling top to bottom", r["scroll"]["max_ms"], "ms",
        baselines=base, target=GAP_TARGET_MS, digits=1,
    )  # fmt: skip
    clicks = sorted(r["click_ms"])
    applies = sorted(x for x in r["click_apply_ms"] if x > 0.05)
    report.note(
        f"a click on another branch until the chat and the map show it: median "
        f"{clicks[len(clicks) // 2]:.0f} ms, worst {clicks[-1]:.0f} ms (the chat's redraw "
        f"included); the map pane's part (model reset, selection): worst "
        f"{(applies[-1] if applies else 0):.1f} ms"
    )
    report.line(
        "worst loop gap while clicking nodes of other branches", r["click"]["max_ms"], "ms",
        baselines=base, target=GAP_TARGET_MS, digits=1,
    )  # fmt: skip
    if "theme" in r:
        theme = sorted(r["theme_ms"])
        report.note(
            f"a live theme switch until every pane is repainted and the code re-coloured: "
            f"median {theme[len(theme) // 2]:.0f} ms, worst {theme[-1]:.0f} ms"
        )
        report.line(
            "worst loop gap while switching the theme live", r["theme"]["max_ms"], "ms",
            baselines=base, target=GAP_TARGET_MS, digits=1,
        )  # fmt: skip
    report.line(
        "an entry appended on the leaf (no relayout)", r["append_ms"], "ms",
        baselines=[("layout alone", r["layout_ms"])], digits=2,
    )  # fmt: skip
    cpu = ", ".join(
        f"{name} {r[name]['max_cpu_ms']:.1f} ms"
        for name in ("idle", "build", "scroll", "click", "theme")
        if name in r and "max_cpu_ms" in r[name]
    )
    report.note(
        f"the GUI thread's own CPU time in its longest gap (without the time the machine ran "
        f"other work): {cpu}"
    )
    stalls = sorted(r.get("stalls", []), key=lambda s: -s["gap_ms"])
    for stall in stalls[:5]:
        where = stall["stacks"][0].strip().splitlines()[-2:] if stall["stacks"] else []
        gcs = ", ".join(f"gen{g} {ms} ms" for ms, g in stall["gc_ms_gen"] if ms >= 1) or "none"
        report.note(
            f"stall {stall['gap_ms']} ms (GC in it: {gcs}) at: "
            + " | ".join(s.strip() for s in where)
        )

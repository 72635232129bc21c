"""The study's chart: size against compression and decompression CPU time, with the Pareto front."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.compression_study.measure import MB
from benchmarks.compression_study.report import size_label


@dataclass(frozen=True)
class ChartPoint:
    name: str
    codec: str
    written_mb: float
    compress_cpu_seconds: float
    decompress_cpu_seconds: float
    on_compress_front: bool
    on_decompress_front: bool


# Where a label may stand against its point, in points, tried in this order.
LABEL_OFFSETS = tuple((dx, dy) for dy in (2, -8, 9, -15, 16, -22, 23, -29, 30, -36) for dx in (3, -3))


def place_labels(axes, labels: list[tuple[str, float, float]]) -> list:
    """Annotates each (text, x, y) at the first offset where it overlaps no label placed before it
    (nor its own point's neighbours' labels); returns the annotations. The axes' limits must be final."""
    renderer = axes.figure.canvas.get_renderer()
    placed, taken = [], []
    for text, x, y in labels:
        for dx, dy in LABEL_OFFSETS:
            annotation = axes.annotate(text, (x, y), fontsize=6, xytext=(dx, dy), textcoords="offset points",
                                       ha="left" if dx > 0 else "right")
            box = annotation.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in taken):
                break
            annotation.remove()
        else:
            # Nowhere free: the first place, so that the label is there at all.
            dx, dy = LABEL_OFFSETS[0]
            annotation = axes.annotate(text, (x, y), fontsize=6, xytext=(dx, dy), textcoords="offset points")
            box = annotation.get_window_extent(renderer)
        placed.append(annotation)
        taken.append(box)
    return placed


def chart_unavailable() -> str | None:
    """Why the chart cannot be drawn here (its optional extra is missing), or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ("matplotlib is not installed, so compression.png is not drawn; compression.json and the tables are "
                "(pip install 'matplotlib>=3.8,<4', or the project's extra: pip install -e '.[study]')")
    return None


def draw_chart(report: dict, path: Path) -> list[ChartPoint]:
    """Draws size against compression and against decompression CPU time,
    one point per setting at the default block size, the Pareto front joined
    by a line; returns the points drawn."""
    # Imported here: matplotlib is an optional extra that only the chart needs.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import ScalarFormatter

    points = [
        ChartPoint(entry["name"], entry["codec"], entry["written_bytes"] / MB, entry["compress"]["cpu_seconds"],
                   entry["decompress"]["cpu_seconds"], entry["pareto_front"]["compress"],
                   entry["pareto_front"]["decompress"])
        for entry in report["measurements"] if entry["on_chart"]
    ]
    figure = Figure(figsize=(14, 6.5))
    figure.subplots_adjust(left=0.05, right=0.99, bottom=0.09, top=0.94, wspace=0.12)
    FigureCanvasAgg(figure)  # renders with Agg, without pyplot's global state
    codecs = list(dict.fromkeys(point.codec for point in points))
    panels = (("compress_cpu_seconds", "on_compress_front", "compression"),
              ("decompress_cpu_seconds", "on_decompress_front", "decompression (full read-back)"))
    for axes, (seconds, on_front, title) in zip(figure.subplots(1, 2), panels):
        for index, codec in enumerate(codecs):
            mine = [point for point in points if point.codec == codec]
            axes.scatter([getattr(point, seconds) for point in mine], [point.written_mb for point in mine],
                         color=f"C{index}", label=codec, s=28, zorder=3)
        front = sorted((getattr(point, seconds), point.written_mb) for point in points if getattr(point, on_front))
        axes.step([x for x, _ in front], [y for _, y in front], where="post", color="black", linewidth=1,
                  linestyle="--", label="Pareto front", zorder=2)
        axes.scatter([x for x, _ in front], [y for _, y in front], facecolors="none", edgecolors="black", s=90,
                     zorder=4)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(ScalarFormatter())
        axes.yaxis.set_minor_formatter(ScalarFormatter())
        axes.set_xlabel(f"{title}: CPU seconds, median (log scale)")
        axes.set_ylabel("written size (MB, log scale)")
        axes.set_title(f"Size against {title} time, block size {size_label(report['default_block_size'])}")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
        # Where a label fits depends on the final limits of the axes.
        axes.autoscale_view()
        place_labels(axes, [(point.name, getattr(point, seconds), point.written_mb) for point in points])
    figure.savefig(path, dpi=110)
    return points

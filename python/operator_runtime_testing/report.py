"""Result tables printed row by row as results arrive."""

import math


class Table:
    """columns: (title, width) pairs; a negative width left-aligns the column."""

    def __init__(self, columns, file=None):
        self.columns = columns
        self.file = file

    def _line(self, cells):
        parts = []
        for (_, width), cell in zip(self.columns, cells):
            text = str(cell)
            parts.append(text.ljust(-width) if width < 0 else text.rjust(width))
        return "  ".join(parts).rstrip()

    def header(self):
        line = self._line([title for title, _ in self.columns])
        print(line, file=self.file, flush=True)
        print("-" * len(line), file=self.file, flush=True)

    def row(self, *cells):
        print(self._line(cells), file=self.file, flush=True)


def fmt_time(seconds):
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.2f} us"


def fmt_gbps(nbytes, seconds):
    if seconds is None or seconds <= 0:
        return "-"
    return f"{nbytes / seconds / 1e9:.2f}"


def fmt_err(err):
    return "-" if err is None else ("inf" if math.isinf(err) else f"{err:.2e}")

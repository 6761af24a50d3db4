# SPDX-License-Identifier: MIT
"""Live progress for the long bench runs (compare.py, http/run.py).

On a terminal: a tqdm bar (Debian's python3-tqdm) with the current step, runs done / total, the
elapsed time and tqdm's estimate of the time left. When stdout is not a terminal (CI logs, a pipe
to a file), or tqdm is not installed: one plain line per step, "[done/total] step", so a log
stays readable and still says how far the run is.

Other output of the run goes through Progress.write(), which prints above the bar instead of
through it.
"""
import sys


class Progress:
    def __init__(self, total, unit="run", stream=None):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stdout
        self.bar = None
        if self.stream.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, unit=unit, file=self.stream, dynamic_ncols=True,
                                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]")

    def start(self, step):
        """Announces the step about to run (e.g. 'fibers × fib')."""
        if self.bar is not None:
            self.bar.set_description_str(step)
        else:
            print(f"[{self.done + 1}/{self.total}] {step}", file=self.stream, flush=True)

    def advance(self, steps=1):
        """Counts finished (or skipped) steps."""
        self.done += steps
        if self.bar is not None:
            self.bar.update(steps)

    def write(self, text):
        text = text.rstrip("\n")
        if not text:
            return
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()

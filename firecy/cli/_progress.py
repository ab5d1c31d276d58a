"""Progress on stderr while the paths are solved."""
import sys
import threading
import time

__all__ = ["Progress", "fit_with_progress", "status"]


class Progress:
    """Progress of a path fit: a callable ``progress(k, n_points, result)``.

    It counts solved path points, so it stays right when several paths
    (grid points, validation folds) report from worker threads at once, and
    keeps the stages apart: ``stage(name)`` gives the callback of one stage
    (the full-data paths, then the validation folds), whose counts and rule
    numbers are shown under its own name: the range of rule counts its
    points span, never one point's count, which a reader would take for the
    result.  On a terminal the line is
    rewritten in place (a tqdm bar when tqdm is installed); redirected, each
    stage prints one line when it ends, and no carriage returns.
    """

    def __init__(self, desc, enabled=True):
        self.desc, self.enabled = desc, enabled and sys.stderr is not None
        self.tty = self.enabled and _isatty(sys.stderr)
        self.bar, self.shown = None, False
        self.counts, self.rules = {}, {}
        self.current = None
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()

    def stage(self, name):
        """The callback for the stage ``name``."""
        def report(k, n, result=None):
            self._report(name, result)
        return report

    def __call__(self, k, n, result=None):
        self._report(None, result)

    def _label(self, name):
        return self.desc if name is None else f"{self.desc} ({name})"

    def _report(self, name, result):
        if not self.enabled:
            return
        with self.lock:
            if name != self.current:
                self._end_stage()
                self.current = name
            self.counts[name] = self.counts.get(name, 0) + 1
            n_rules = getattr(result, "n_rules", None)
            if n_rules is not None:
                lo, hi = self.rules.get(name, (n_rules, n_rules))
                self.rules[name] = (min(lo, n_rules), max(hi, n_rules))
            if not self.tty:
                return
            if self.bar is None:
                self.bar = _tqdm_bar(self._label(name))
            extra = "" if name not in self.rules else _rules_range(*self.rules[name])
            if self.bar is not False:
                self.bar.update(1)
                if extra:
                    self.bar.set_postfix_str(extra)
            elif time.perf_counter() - self.t0 > 0.5:
                sys.stderr.write(f"\r{self._label(name)}: {self.counts[name]} points"
                                 f"{', ' + extra if extra else ''}   ")
                sys.stderr.flush()
                self.shown = True

    def _end_stage(self):
        """Close the current stage's line (with the lock held)."""
        name = self.current
        if name not in self.counts:
            return
        if self.bar is not None and self.bar is not False:
            self.bar.close()
        elif self.shown:
            sys.stderr.write("\n")
        if not self.tty:
            rules = self.rules.get(name)
            sys.stderr.write(f"{self._label(name)}: {self.counts[name]} points"
                             + ("" if rules is None else ", " + _rules_range(*rules))
                             + "\n")
        sys.stderr.flush()
        self.bar, self.shown = None, False

    def close(self):
        if not self.enabled:
            return
        with self.lock:
            self._end_stage()
            self.current = None


def _rules_range(lo, hi):
    """The rule counts the solved points span (the selected model is one of
    them; the stage's last point, from whichever thread, says nothing)."""
    return (f"{hi} rules" if lo == hi else f"{lo} to {hi} rules") + " along the path"


def _isatty(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _tqdm_bar(desc):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return False
    return tqdm(desc=desc, file=sys.stderr, leave=False, unit=" points", dynamic_ncols=True)


def fit_with_progress(est, X, y, desc, show_progress):
    """``est.fit(X, y)`` for a FIRE estimator, reporting its path points."""
    bar = Progress(desc, show_progress)
    try:
        est.fit(X, y, progress=bar)
    finally:
        bar.close()
    return est


def status(msg, quiet=False):
    """A status line on stderr (unless ``quiet``)."""
    if not quiet:
        print(msg, file=sys.stderr, flush=True)

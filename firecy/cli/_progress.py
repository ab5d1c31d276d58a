"""Progress on stderr while the paths are solved."""
import sys
import threading
import time

__all__ = ["Progress", "fit_with_progress", "status"]


class Progress:
    """Progress of a path fit: a callable ``progress(k, n_points, result)``.

    Shows a tqdm bar when tqdm is installed, else a counter on stderr.  It
    counts solved path points, so it stays right when several paths (grid
    points, validation folds) report from worker threads at once.
    """

    def __init__(self, desc, enabled=True):
        self.desc, self.enabled = desc, enabled and sys.stderr is not None
        self.bar, self.count, self.shown = None, 0, False
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()

    def __call__(self, k, n, result=None):
        if not self.enabled:
            return
        with self.lock:
            self.count += 1
            if self.bar is None:
                try:
                    from tqdm.auto import tqdm
                except ImportError:
                    tqdm = None
                self.bar = (tqdm(desc=self.desc, file=sys.stderr, leave=False,
                                 unit=" points", dynamic_ncols=True)
                            if tqdm is not None else False)
            n_rules = getattr(result, "n_rules", None)
            if self.bar is not False:
                self.bar.update(1)
                if n_rules is not None:
                    self.bar.set_postfix_str(f"{n_rules} rules")
            elif time.perf_counter() - self.t0 > 0.5:
                extra = "" if n_rules is None else f", {n_rules} rules"
                sys.stderr.write(f"\r{self.desc}: {self.count} points{extra}   ")
                sys.stderr.flush()
                self.shown = True

    def close(self):
        if self.bar is not None and self.bar is not False:
            self.bar.close()
        elif self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


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

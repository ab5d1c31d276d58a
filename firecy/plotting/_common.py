"""What every picture needs: matplotlib, imported only when a function is called."""


def _require_matplotlib():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "firecy.plotting needs matplotlib, which is not installed: "
            "pip install matplotlib  (or: pip install 'firecy[plot]')"
        ) from None
    return Figure

"""The demo's budget picture: mean test error and antecedents against the
budget for FIRE and L1, the forest's test error as a horizontal line."""
import numpy as np

__all__ = ["save_budget_picture"]


def _mean_se(values):
    values = np.asarray(values, dtype=np.float64)
    se = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0]) if values.shape[0] > 1 else 0
    return values.mean(axis=0), se


def budget_figure(cv, fire_name):
    """The figure (two panels) of ``cross_validate``'s result."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.2), layout="constrained")
    err_ax, ante_ax = fig.subplots(1, 2)
    budgets = cv["budgets"]
    n_fits = len(cv["n_test"])
    styles = {"fire": (fire_name, "C0", "o"), "l1": ("L1 selection", "C1", "s")}
    for key, (label, color, marker) in styles.items():
        if key not in cv["curve"]:
            continue
        mse, se = _mean_se(cv["curve"][key][:, :, 0])
        err_ax.plot(budgets, mse, marker=marker, color=color, label=label)
        err_ax.fill_between(budgets, mse - se, mse + se, color=color, alpha=0.18, lw=0)
        ante, _ = _mean_se(cv["curve"][key][:, :, 2])
        ante_ax.plot(budgets, ante, marker=marker, color=color, label=label)
    forest = float(cv["scores"]["forest"][:, 0].mean())
    err_ax.axhline(forest, color="0.35", ls="--", label="full random forest")
    err_ax.set_xlabel("budget: at most N terms (rules and linear terms)")
    err_ax.set_ylabel(f"test MSE, mean over {n_fits} fits")
    err_ax.set_title("test error (band: ± one standard error)")
    err_ax.legend(loc="upper right", fontsize="small")
    ante_ax.set_xlabel("budget: at most N terms (rules and linear terms)")
    ante_ax.set_ylabel("antecedents (split conditions to read)")
    ante_ax.set_title("what a reader must read")
    ante_ax.legend(loc="upper left", fontsize="small")
    for ax in (err_ax, ante_ax):
        ax.set_xticks(budgets[budgets % 2 == 0] if len(budgets) > 8 else budgets)
        ax.grid(alpha=0.3)
    fig.suptitle(f"diabetes data, {n_fits} cross-validation fits "
                 f"({cv['n_repeats']} x {n_fits // cv['n_repeats']} folds)")
    return fig


def save_budget_picture(cv, out_dir, fire_name):
    """Save ``budget.png`` in ``out_dir``; its path, or None without matplotlib
    (``save_pictures`` has said so)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from pathlib import Path

    path = Path(out_dir) / "budget.png"
    budget_figure(cv, fire_name).savefig(path, dpi=120)
    return path

"""``firecy explain DATA.csv --target COLUMN --rows 0,5,9``: why each row gets
its prediction.

There is no saved-model format: the command fits exactly as ``firecy
extract`` does with the same options (the same split, seed and rules), then
explains rows of the same file: for each, the intercept, the ensemble's
baseline and the contribution of every kept rule, which sum to the
prediction on the model's raw scale (``estimator.explain``). It prints the
rules that hold on each row, writes the whole table as CSV, and can save a
waterfall picture per row and the run's report.
"""
import numpy as np

from firecy.cli._errors import CLIError
from firecy.cli._extract import check_output_file, fit_job, read_data
from firecy.cli._output import prepare_dir
from firecy._escape import display_text, json_text

__all__ = ["run_explain", "MAX_PRINTED"]

# the rows printed on the terminal (all are in the CSV file)
MAX_PRINTED = 5
MAX_PICTURES = 20


def _rows(args, n):
    """The data rows to explain (0 is the first data row, CSV line 2)."""
    if args.rows is None:
        return list(range(n))
    bad = [r for r in args.rows if r >= n]
    if bad:
        raise CLIError(f"--rows: {args.data} has {n} data rows (0 to {n - 1}); no row "
                       f"{bad[0]}")
    return list(args.rows)


def _features_text(features):
    def one(v):
        return format(v, ".6g") if isinstance(v, float) else str(v)

    return ", ".join(f"{display_text(k)} = {display_text(one(v))}"
                     for k, v in features.items())


def _print_row(records, row, scale_of):
    by_class = {}
    for r in records:
        by_class.setdefault(r.get("class"), []).append(r)
    for label, terms in by_class.items():
        total = sum(t["contribution"] for t in terms)
        start = sum(t["contribution"] for t in terms if t["kind"] != "rule")
        print(f"row {row} (CSV line {row + 2}): {scale_of(label)} = {total:.6g}")
        print(f"  {start:+12.6g}  intercept + ensemble baseline")
        for t in terms:
            if t["kind"] == "rule" and t["fires"]:
                print(f"  {t['contribution']:+12.6g}  if {t['text']}   "
                      f"({_features_text(t['features'])})")


def _write_csv(records, path, classification):
    import csv

    columns = (["row", "csv_line"] + (["class"] if classification else [])
               + ["term", "kind", "text", "fires", "value", "weight", "contribution",
                  "features"])
    try:
        with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for r in records:
                out = dict(r, csv_line=r["row"] + 2, features=json_text(r["features"], None))
                writer.writerow([out[c] for c in columns])
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def run_explain(args):
    """``firecy explain``."""
    from firecy.estimators._explain import raw_scale_name

    X, y = read_data(args)
    rows = _rows(args, len(X))
    out = check_output_file(args.output, "--output")
    if args.report:
        check_output_file(args.report, "--report")
    if args.plot_dir:
        prepare_dir(args.plot_dir)
    res = fit_job(args, X, y)
    fire, names = res["fire"], list(X.columns)
    # the job fits on float arrays, in the file's column order
    Xa = np.asarray(X, dtype=np.float64)[rows]
    records = fire.explain(Xa, feature_names=names, as_frame=False)
    for r in records:
        r["row"] = rows[r["row"]]
    print()
    print(f"Explained rows ({len(rows)}): each prediction is the intercept, the ensemble's "
          "baseline and the contributions of the rules that hold on the row.")
    by_row = {}
    for r in records:
        by_row.setdefault(r["row"], []).append(r)
    for row in rows[:MAX_PRINTED]:
        _print_row(by_row[row], row, lambda label: raw_scale_name(fire, label))
    if len(rows) > MAX_PRINTED:
        print(f"({len(rows) - MAX_PRINTED} more rows in {out})")
    _write_csv(records, out, res["classification"])
    print()
    print(f"saved {out}")
    if args.plot_dir:
        _save_pictures(fire, Xa, rows, names, args.plot_dir)
    if args.report:
        from firecy.cli._report import save_report

        print(f"saved {save_report(res, args, names)}")
    return 0


def _save_pictures(fire, Xa, rows, names, out_dir):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("pictures skipped: matplotlib is not installed "
              "(pip install matplotlib, or pip install 'firecy[plot]')")
        return
    from firecy.plotting import plot_explanation

    for k, row in enumerate(rows[:MAX_PICTURES]):
        fig = plot_explanation(fire, Xa[k:k + 1], feature_names=names)
        path = prepare_dir(out_dir) / f"explanation_row{row}.png"
        fig.savefig(path, dpi=110)
        print(f"saved {path}")
    if len(rows) > MAX_PICTURES:
        print(f"(pictures of the first {MAX_PICTURES} rows; give --rows for others)")

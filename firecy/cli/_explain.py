"""``firecy explain DATA.csv --target COLUMN --rows 2,7,11``: why each row gets
its prediction.

There is no saved-model format: the command fits exactly as ``firecy
extract`` does with the same options (the same split, seed and rules), then
explains rows of the same file, named by their CSV line numbers (the header
is line 1, the first data row line 2): for each, the intercept (with the
ensemble's baseline), the contribution of every kept rule and of every kept
linear term, which sum to the prediction on the model's raw scale
(``estimator.explain``). It prints the rules that hold on each row and every
linear term, writes the whole table as CSV, and can save a waterfall picture
per row and the run's report.
"""

from firecy.cli._errors import CLIError
from firecy.cli._extract import check_output_file, fit_job, read_data
from firecy.cli._output import prepare_dir
from firecy._escape import display_text, json_text

__all__ = ["run_explain", "MAX_PRINTED"]

# the rows printed on the terminal (all are in the CSV file)
MAX_PRINTED = 5
MAX_PICTURES = 20


def _rows(args, lines):
    """The positions of the data rows to explain: ``--rows`` gives their CSV
    lines (``lines``: each data row's line; the header is line 1)."""
    if args.rows is None:
        return list(range(len(lines)))
    where = {int(line): k for k, line in enumerate(lines)}
    bad = [r for r in args.rows if r not in where]
    if bad:
        what = ("line 1 is the header" if bad[0] == 1 else
                f"no data row starts on line {bad[0]}")
        raise CLIError(f"--rows takes CSV line numbers: the data rows of {args.data} are "
                       f"on lines {int(lines[0])} to {int(lines[-1])}; {what}")
    return [where[r] for r in args.rows]


def _features_text(features):
    def one(v):
        if v is None or (isinstance(v, float) and v != v):
            return "missing"
        return format(v, ".6g") if isinstance(v, float) else str(v)

    return ", ".join(f"{display_text(k)} = {display_text(one(v))}"
                     for k, v in features.items())


def _intercept_line(terms):
    """The intercept's line: the estimator's intercept and the ensemble's
    baseline (each said when the baseline is not 0), summed as the rules'
    printout sums them (``estimator_intercept``)."""
    own = sum(t["contribution"] for t in terms if t["kind"] == "intercept")
    base = sum(t["contribution"] for t in terms if t["kind"] == "baseline")
    text = "intercept" if base == 0 else (f"intercept (FIRE intercept {own:.6g} + "
                                          f"ensemble baseline {base:.6g})")
    return f"  {own + base:+12.6g}  {text}"


def _centres(fire):
    """{explain's term name: the linear term's centre} (``linear_<feature>``)."""
    terms = getattr(fire, "linear_terms_", None)
    if terms is None:
        return {}
    return {f"linear_{int(f)}": float(c) for f, c in zip(terms.features, terms.center)}


def _print_row(records, line, scale_of, centres):
    by_class = {}
    for r in records:
        by_class.setdefault(r.get("class"), []).append(r)
    for label, terms in by_class.items():
        total = sum(t["contribution"] for t in terms)
        print(f"CSV line {line}: {scale_of(label)} = {total:.6g}")
        print(_intercept_line(terms))
        for t in terms:
            if t["kind"] == "rule" and t["fires"]:
                print(f"  {t['contribution']:+12.6g}  if {t['text']}   "
                      f"({_features_text(t['features'])})")
            elif t["kind"] not in ("rule", "intercept", "baseline") and t["fires"]:
                # a linear or confirmatory term (a confirmatory rule: where it holds)
                # a linear term adds to every row (0 where its x is missing)
                centre = centres.get(t["term"])
                at = "" if centre is None else f", centre {centre:.6g}"
                print(f"  {t['contribution']:+12.6g}  {t['text']}   "
                      f"({_features_text(t['features'])}{at})")


def _write_csv(records, path, classification, lines):
    import csv

    columns = (["csv_line", "row"] + (["class"] if classification else [])
               + ["term", "kind", "text", "fires", "value", "weight", "contribution",
                  "features"])
    try:
        with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for r in records:
                out = dict(r, csv_line=int(lines[r["row"]]),
                           features=json_text(r["features"], None))
                writer.writerow([out[c] for c in columns])
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def run_explain(args):
    """``firecy explain``."""
    from firecy.rules import raw_scale_name

    from firecy.cli._text_columns import csv_line_numbers, model_frame

    X, y = read_data(args)
    lines = csv_line_numbers(X)
    rows = _rows(args, lines)
    out = check_output_file(args.output, "--output")
    if args.report:
        check_output_file(args.report, "--report")
    if args.plot_dir:
        prepare_dir(args.plot_dir)
    res = fit_job(args, X, y)
    fire, names = res["fire"], list(X.columns)
    # the job's form of the data (float arrays, or a frame of category
    # columns), in the file's column order
    Xm = model_frame(X)
    Xa = Xm.iloc[rows] if hasattr(Xm, "iloc") else Xm[rows]
    records = fire.explain(Xa, feature_names=names, as_frame=False)
    for r in records:
        r["row"] = rows[r["row"]]
    linear = any(r["kind"] not in ("rule", "intercept", "baseline") for r in records)
    print()
    print(f"Explained rows ({len(rows)}, by CSV line; line 1 is the header): each prediction "
          "is the intercept (with the ensemble's baseline), the contributions of the rules "
          "that hold on the row" + (" and those of the linear terms (slope * (x clipped to "
                                    "its range - its centre); 0 for a missing x)"
                                    if linear else "") + ".")
    by_row = {}
    for r in records:
        by_row.setdefault(r["row"], []).append(r)
    for row in rows[:MAX_PRINTED]:
        _print_row(by_row[row], int(lines[row]), lambda label: raw_scale_name(fire, label),
                   _centres(fire))
    if len(rows) > MAX_PRINTED:
        print(f"({len(rows) - MAX_PRINTED} more rows in {out})")
    _write_csv(records, out, res["classification"], lines)
    print()
    print(f"saved {out}")
    if args.plot_dir:
        _save_pictures(fire, Xa, [int(lines[r]) for r in rows], names, args.plot_dir)
    if args.report:
        from firecy.cli._report import save_report

        print(f"saved {save_report(res, args, names)}")
    return 0


def _save_pictures(fire, Xa, lines, names, out_dir):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("pictures skipped: matplotlib is not installed "
              "(pip install matplotlib, or pip install 'firecy[plot]')")
        return
    from firecy.plotting import plot_explanation

    for k, line in enumerate(lines[:MAX_PICTURES]):
        row = Xa.iloc[k:k + 1] if hasattr(Xa, "iloc") else Xa[k:k + 1]
        fig = plot_explanation(fire, row, feature_names=names)
        path = prepare_dir(out_dir) / f"explanation_line{line}.png"
        fig.savefig(path, dpi=110)
        print(f"saved {path}")
    if len(lines) > MAX_PICTURES:
        print(f"(pictures of the first {MAX_PICTURES} rows; give --rows for others)")

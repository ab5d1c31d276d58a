"""Render firecy's HTML report in headless Chromium and measure its height (px)."""
import os, subprocess, sys, tempfile, warnings
from pathlib import Path
import numpy as np
from PIL import Image

OUT = os.environ.get("REPORT_LENGTH_OUT", "/tmp")


def height(png):
    im = np.asarray(Image.open(png).convert("L"))
    rows = np.flatnonzero((im < 250).any(axis=1))
    return int(rows[-1]) + 1 if rows.size else 0

def shoot(html_path, out_png):
    subprocess.run(["chromium-headless-shell", "--headless", "--no-sandbox", "--disable-gpu",
                    f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1200,16000",
                    "--hide-scrollbars", f"--screenshot={out_png}", Path(html_path).as_uri()],
                   capture_output=True, timeout=180, check=True)
    return height(out_png)

def main(tag):
    from sklearn.datasets import load_diabetes, load_breast_cancer
    from sklearn.model_selection import train_test_split
    from firecy import FIRERegressor, FIREClassifier
    from firecy.report import write_report
    import firecy
    print("firecy from", firecy.__file__)
    out = {}
    for name, loader, kind in [("diabetes", load_diabetes, FIRERegressor),
                               ("breast_cancer", load_breast_cancer, FIREClassifier)]:
        X, y = loader(return_X_y=True, as_frame=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = kind(random_state=0).fit(Xtr, ytr)
        path = f"{OUT}/{tag}_{name}.html"
        write_report(est, path, Xtr, ytr, X_test=Xte, y_test=yte)
        out[name] = shoot(path, f"{OUT}/{tag}_{name}.png")
        print(tag, name, out[name], "px")
    return out

if __name__ == "__main__":
    main(sys.argv[1])

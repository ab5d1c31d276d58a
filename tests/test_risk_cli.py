"""``firecy extract --rule-depth``: one depth, several (a tuple), errors."""
import pytest

from firecy.cli._job import _make_fire
from firecy.cli._parser import build_parser

BASE = ["extract", "data.csv", "--target", "y"]


@pytest.mark.parametrize("text, depth", [("1,2", (1, 2)), ("2,1", (1, 2)), ("1,3,2", (1, 2, 3)),
                                         ("2", 2), ("leaves", None), ("auto", "auto")])
def test_rule_depth_reaches_the_estimator(text, depth):
    args = build_parser().parse_args(BASE + ["--rule-depth", text])
    assert args.rule_depth == depth
    assert _make_fire(None, args, "mcp", 0.5).rule_depth == depth


@pytest.mark.parametrize("bad", ["0", "1,0", "1,1", "1,x", "1,", ",", "1.5,2", "deep", ""])
def test_bad_rule_depth_is_a_one_line_error(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(BASE + ["--rule-depth", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--rule-depth must be 'auto', 'leaves', an integer >= 1 or distinct integers" in err
    assert repr(bad) in err


def test_selection_budget_reaches_the_estimator_and_is_described():
    args = build_parser().parse_args(BASE + ["--selection", "budget", "--max-rules", "7"])
    fire = _make_fire(None, args, "mcp", 0.5)
    assert fire.selection == "budget" and fire.max_rules == 7

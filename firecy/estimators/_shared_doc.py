"""The parameters the count and survival estimators share with
:class:`~firecy.FIRERegressor`, taken from its docstring so that they are
documented once."""
from firecy.estimators._regressor import FIRERegressor

__all__ = ["shared_parameters", "parameter_entry"]


def shared_parameters():
    """FIRERegressor's parameter entries after ``estimator``."""
    doc = FIRERegressor.__doc__
    start = doc.index("    penalty : ")
    end = doc.index("    Attributes\n")
    return doc[start:end].rstrip() + "\n"


def parameter_entry(name):
    """FIRERegressor's entry of the parameter ``name`` (its line and its
    description), for an estimator whose parameter means the same."""
    doc = FIRERegressor.__doc__
    # the entry ends at the next line indented as a parameter's name
    lines = doc[doc.index(f"    {name} : "):].split("\n")
    entry = [lines[0]]
    for line in lines[1:]:
        if line.startswith("        ") or not line.strip():
            entry.append(line)
        else:
            break
    return "\n".join(entry).rstrip() + "\n"

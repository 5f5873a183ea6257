"""float64 numpy references of every operator (inputs are float64 arrays).

One module per operator of the manifest (ops/manifest.json), reference/<name>.py, defining
the function <name>; reference.<name> is that function, and REFERENCES maps each name to it.
"""

import importlib

from operator_runtime import _manifest

REFERENCES = {}
for _name in _manifest.names():
    # The function replaces its module under the package's attribute _name.
    REFERENCES[_name] = globals()[_name] = getattr(
        importlib.import_module(f"{__name__}.{_name}"), _name)
del _name

__all__ = list(REFERENCES)

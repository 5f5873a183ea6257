"""One module per operator; each offers op(...), op_(out, ...) and prepare_op(out, ...).

The operators are those of the manifest (ops/manifest.json): ops/<name>.py for each name.
"""

import importlib

from .. import _manifest

__all__ = []
for _name in _manifest.names():
    _module = importlib.import_module(f"{__name__}.{_name}")
    for _form in (_name, f"{_name}_", f"prepare_{_name}"):
        globals()[_form] = getattr(_module, _form)  # the function, not its module, under _name
        __all__.append(_form)
del _name, _module, _form

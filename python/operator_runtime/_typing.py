"""Type aliases of the public API (annotations only: nothing here is checked at run time)."""

from typing import Any, Literal, TypeVar

#: An array: numpy.ndarray, torch.Tensor, cupy.ndarray, or an object with __dlpack__.
Array = Any
#: A function returns an array of its input's library (or the out= array it was given).
A = TypeVar("A")
Backend = Literal["auto", "cpu", "nvidia", "metax", "tilelang"]

"""The numerics contract the split tests share: floats within `tol` times the
output's largest magnitude, integers (indices) identical unless told not."""
from __future__ import annotations

import jax
import numpy as np


def assert_matches(want, got, tol: float = 1e-5, exact_ints: bool = True) -> None:
    """Compares two pytrees of arrays leaf by leaf."""
    want, got = jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert w.shape == g.shape and w.dtype == g.dtype, (w.shape, g.shape, w.dtype, g.dtype)
        if np.issubdtype(w.dtype, np.integer) and exact_ints:
            np.testing.assert_array_equal(g, w)
            continue
        wide = np.complex128 if np.iscomplexobj(w) else np.float64
        w64, g64 = w.astype(wide), g.astype(wide)
        scale = max(float(np.max(np.abs(w64))), 1e-30)
        err = float(np.max(np.abs(w64 - g64)))
        assert err <= tol * scale, (err, tol * scale)

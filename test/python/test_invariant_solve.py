"""memfit-rewrite's invariant-solve (opt-in): a loop that solves every chunk
against one triangular factor multiplies by the factor's inverse instead.

Numerics against float64, forward and gradient (jax's backward loop solves
with the transposed factor), under the README's contract (memfit's error
<= 4 x jax's + 16 float32 ulps): it holds on well-conditioned factors and
breaks on an ill-conditioned one, which is why the rewrite is off by
default; the default pipeline keeps the solves.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.linalg import solve_triangular

import memfit
from memfit.oracle import FACTOR, FLOOR_ULPS, relative_error

EPS32 = float(np.finfo(np.float32).eps)
CHUNK = 500


def _kernel(a, b, ls):
    d = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d / ls ** 2)


def gram_of_solves(z, x, ls, jitter):
    """sum over chunks of x of A_c A_c^T, A_c = L^-1 K(z, x_c): the textbook
    SGPR statistic, chunked by hand with lax.scan (what a user writes)."""
    l = jnp.linalg.cholesky(_kernel(z, z, ls) + jitter * jnp.eye(z.shape[0], dtype=z.dtype))

    def step(acc, xc):
        a = solve_triangular(l, _kernel(z, xc, ls), lower=True)
        return acc + a @ a.T, None

    m = z.shape[0]
    chunks = x.reshape(-1, CHUNK, x.shape[1])
    return jax.lax.scan(step, jnp.zeros((m, m), z.dtype), chunks)[0]


def loss(z, x, ls, jitter):
    return jnp.trace(gram_of_solves(z, x, ls, jitter))


# (inducing points' spread, lengthscale, jitter): well-conditioned, then
# inducing points close together, a long lengthscale, tiny jitter
CASES = {
    "well": (3.0, 1.0, 1e-2),
    "close_points": (0.3, 1.0, 1e-4),
    "tiny_jitter": (1.0, 1.0, 1e-5),
}
ILL = (3.0, 4.0, 1e-4)  # a long lengthscale: the inverse's error is ~6x jax's
OPT_IN = "memfit-inline,memfit-rewrite{invariant-solve=true}"


def _data(spread, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (4 * CHUNK, 3)).astype(np.float32)
    z = rng.uniform(-spread, spread, (48, 3)).astype(np.float32)
    return jnp.asarray(z), jnp.asarray(x)


def _f64(fn, *args):
    with jax.enable_x64(True):
        out = jax.jit(fn, static_argnums=(2, 3))(*(jnp.asarray(np.asarray(a), jnp.float64)
                                                  for a in args[:2]), *args[2:])
        return np.asarray(out, np.float64)


def _rewritten(fn, passes=OPT_IN):
    return memfit.jit(fn, passes=passes, static_argnums=(2, 3))


def _within_contract(got_jax, got_memfit, ref):
    ej, em = relative_error(got_jax, ref), relative_error(got_memfit, ref)
    assert em <= FACTOR * ej + FLOOR_ULPS * EPS32, (em, ej)


def test_the_loop_multiplies_by_the_inverse():
    z, x = _data(3.0)
    text = _rewritten(gram_of_solves).lower(z, x, 1.0, 1e-2).as_text()
    body = text[text.index("stablehlo.while"):]
    assert "trsm" not in body.split("stablehlo.return")[1]  # no solve in the body
    default = _rewritten(gram_of_solves, "memfit-inline,memfit-rewrite")
    off = default.lower(z, x, 1.0, 1e-2).as_text()
    assert "trsm" in off[off.index("stablehlo.while"):]


def test_ill_conditioned_factor_breaks_the_contract():
    """Why invariant-solve is opt-in (README): should this start to pass,
    the rewrite may become a default."""
    spread, ls, jitter = ILL
    z, x = _data(spread)
    ref = _f64(gram_of_solves, z, x, ls, jitter)
    ej = relative_error(jax.jit(gram_of_solves, static_argnums=(2, 3))(z, x, ls, jitter), ref)
    em = relative_error(_rewritten(gram_of_solves)(z, x, ls, jitter), ref)
    assert em > FACTOR * ej + FLOOR_ULPS * EPS32


@pytest.mark.parametrize("case", list(CASES))
def test_forward_against_float64(case):
    spread, ls, jitter = CASES[case]
    z, x = _data(spread)
    ref = _f64(gram_of_solves, z, x, ls, jitter)
    got_jax = jax.jit(gram_of_solves, static_argnums=(2, 3))(z, x, ls, jitter)
    got_memfit = _rewritten(gram_of_solves)(z, x, ls, jitter)
    _within_contract(got_jax, got_memfit, ref)


@pytest.mark.parametrize("case", list(CASES))
def test_gradient_against_float64(case):
    spread, ls, jitter = CASES[case]
    z, x = _data(spread, seed=1)
    grad = jax.grad(loss)
    g = _rewritten(grad)
    text = g.lower(z, x, ls, jitter).as_text()
    assert text.count("stablehlo.while") >= 2  # forward and backward loops
    ref = _f64(grad, z, x, ls, jitter)
    _within_contract(jax.jit(grad, static_argnums=(2, 3))(z, x, ls, jitter),
                     g(z, x, ls, jitter), ref)


def test_split_loop_solve_uses_the_inverse_when_asked():
    """A solve that memfit-split puts in a loop (GP mean over chunks of x)
    gets the inverse when the rewrite runs after the split."""
    z, x = _data(3.0)  # a well-conditioned factor
    y = jnp.asarray(np.random.default_rng(2).standard_normal((48, 1)), jnp.float32)

    def gp_mean(z, x, y):
        l = jnp.linalg.cholesky(_kernel(z, z, 0.5) + 1e-2 * jnp.eye(48, dtype=z.dtype))
        a = solve_triangular(l, _kernel(z, x, 0.5), lower=True)
        return a.T @ solve_triangular(l, y, lower=True)

    g = memfit.jit(gp_mean, memory_limit="256KiB", passes="memfit-rewrite{invariant-solve=true}")
    text = g.lower(z, x, y).as_text()
    loop = text[text.index("stablehlo.while"):]
    assert "stablehlo.dot_general" in loop and "trsm" not in loop.split("stablehlo.return")[1]
    np.testing.assert_allclose(np.asarray(g(z, x, y)), np.asarray(jax.jit(gp_mean)(z, x, y)),
                               rtol=2e-4, atol=2e-4)

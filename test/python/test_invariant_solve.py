"""memfit-rewrite's invariant-solve (on by default): a loop that solves every
chunk against one triangular factor solves it by blocked substitution, the
diagonal blocks' inverses formed once before the loop and one refinement
step per block.

Numerics against float64, forward and gradient (jax's backward loop solves
with the transposed factor), under the README's contract (memfit's error
<= 4 x jax's + 16 float32 ulps), on well- and ill-conditioned RBF Cholesky
factors of 160 rows: three diagonal blocks of 64, 64 and 32, so the
off-diagonal updates, the remainder block and the refinement all run. The
rewrite it replaced (multiplying by the whole inverse) broke the contract on
the ill-conditioned factors below (`ILL`): up to 5.6x jax's error.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.linalg import solve_triangular

import memfit
from memfit.testing.oracle import FACTOR, FLOOR_ULPS, relative_error

EPS32 = float(np.finfo(np.float32).eps)
CHUNK = 500
M = 160  # inducing points: blocks of 64, 64 and a remainder of 32


def _kernel(a, b, ls):
    d = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d / ls ** 2)


def _factor(z, ls, jitter):
    return jnp.linalg.cholesky(_kernel(z, z, ls) + jitter * jnp.eye(z.shape[0], dtype=z.dtype))


def gram_of_solves(z, x, ls, jitter):
    """sum over chunks of x of A_c A_c^T, A_c = L^-1 K(z, x_c): the textbook
    SGPR statistic, chunked by hand with lax.scan (what a user writes)."""
    l = _factor(z, ls, jitter)

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
    "long_lengthscale": (3.0, 4.0, 1e-4),  # the whole inverse: ~5x jax's error
    "longer_lengthscale": (3.0, 6.0, 1e-5),
}
OFF = "memfit-inline,memfit-rewrite{invariant-solve=false}"


def _data(spread, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (4 * CHUNK, 3)).astype(np.float32)
    z = rng.uniform(-spread, spread, (M, 3)).astype(np.float32)
    return jnp.asarray(z), jnp.asarray(x)


def _f64(fn, *args):
    with jax.enable_x64(True):
        out = jax.jit(fn, static_argnums=(2, 3))(*(jnp.asarray(np.asarray(a), jnp.float64)
                                                  for a in args[:2]), *args[2:])
        return np.asarray(out, np.float64)


def _rewritten(fn, passes="memfit-inline,memfit-rewrite"):
    return memfit.jit(fn, passes=passes, static_argnums=(2, 3))


def _within_contract(got_jax, got_memfit, ref):
    ej, em = relative_error(got_jax, ref), relative_error(got_memfit, ref)
    assert em <= FACTOR * ej + FLOOR_ULPS * EPS32, (em, ej)


def _loop_body(text):
    body = text[text.index("stablehlo.while"):]
    return body.split("stablehlo.return")[1]  # the cond's return comes first


def test_the_loop_body_has_no_solve():
    z, x = _data(3.0)
    on = _rewritten(gram_of_solves).lower(z, x, 1.0, 1e-2).as_text()
    assert "trsm" not in _loop_body(on)
    off = _rewritten(gram_of_solves, OFF).lower(z, x, 1.0, 1e-2).as_text()
    assert "trsm" in _loop_body(off)


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
    assert "trsm" not in _loop_body(text[text.rindex("stablehlo.while") - 10:])
    ref = _f64(grad, z, x, ls, jitter)
    _within_contract(jax.jit(grad, static_argnums=(2, 3))(z, x, ls, jitter),
                     g(z, x, ls, jitter), ref)


# Every form jax's solve_triangular emits: lower/upper, transposed or not,
# the factor on the left or the right of the unknowns.
FORMS = [(lower, trans, left) for lower in (True, False) for trans in (False, True)
         for left in (True, False)]


@pytest.mark.parametrize("lower,trans,left", FORMS)
def test_every_solve_form_against_float64(lower, trans, left):
    def solves(z, x, ls, jitter):
        l = _factor(z, ls, jitter)
        t = l if lower else l.T

        def step(acc, xc):
            k = _kernel(z, xc, ls)
            a = jax.lax.linalg.triangular_solve(t, k if left else k.T, left_side=left,
                                                lower=lower, transpose_a=trans)
            return acc + jnp.sum(a * a, axis=1 if left else 0), None

        return jax.lax.scan(step, jnp.zeros((M,), z.dtype), x.reshape(-1, CHUNK, 3))[0]

    spread, ls, jitter = CASES["long_lengthscale"]
    z, x = _data(spread, seed=2)
    g = _rewritten(solves)
    assert "trsm" not in _loop_body(g.lower(z, x, ls, jitter).as_text())
    ref = _f64(solves, z, x, ls, jitter)
    _within_contract(jax.jit(solves, static_argnums=(2, 3))(z, x, ls, jitter),
                     g(z, x, ls, jitter), ref)


def test_split_loop_solve_is_blocked():
    """A solve that memfit-split puts in a loop (GP mean over chunks of x)
    is blocked by the rewrite that runs after the split."""
    z, x = _data(3.0)
    y = jnp.asarray(np.random.default_rng(2).standard_normal((M, 1)), jnp.float32)

    def gp_mean(z, x, y):
        l = _factor(z, 0.5, 1e-2)
        a = solve_triangular(l, _kernel(z, x, 0.5), lower=True)
        return a.T @ solve_triangular(l, y, lower=True)

    g = memfit.jit(gp_mean, memory_limit="1MiB")
    text = g.lower(z, x, y).as_text()
    assert "trsm" not in _loop_body(text)
    np.testing.assert_allclose(np.asarray(g(z, x, y)), np.asarray(jax.jit(gp_mean)(z, x, y)),
                               rtol=2e-4, atol=2e-4)

"""A float64 oracle for memfit's numerics contract.

memfit may change rounding, never accuracy: on any data, a transformed
program's error against a float64 evaluation must stay within a small factor
of the original program's own error (README, "numerics contract"). This
module holds programs that exercise every rewrite and split shape, data
families that are hard for them (offsets, low dimensions, near-duplicate
points, ties, wide ranges, ill-conditioned factors), float64 references
written in numpy, and the check. ``test_numerics_oracle.py`` runs a few
hundred cases; ``bench/bench_numerics.py`` thousands.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

#: memfit's error may exceed jax's by this factor ...
FACTOR = 4.0
#: ... plus this many float32 ulps of the output's largest magnitude (jax's
#: own error can be 0 on easy data, where any change of summation order
#: shows).
FLOOR_ULPS = 16
EPS32 = float(np.finfo(np.float32).eps)

FAMILIES = ("normal", "offset", "lowdim", "near_duplicates", "ties", "wide_range")


def points(family: str, rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n points in d dimensions that are hard for distance algebra."""
    if family == "normal":
        p = rng.standard_normal((n, d))
    elif family == "offset":  # map coordinates, timestamps: far from 0
        p = 1000.0 + 10.0 * rng.random((n, d))
    elif family == "lowdim":  # on a line: one coordinate carries it all
        p = np.zeros((n, d))
        p[:, 0] = 10.0 * rng.random(n)
        p[:, 1:] = 1e-3 * rng.standard_normal((n, d - 1))
    elif family == "near_duplicates":
        base = rng.standard_normal((max(n // 8, 1), d))
        p = base[rng.integers(0, len(base), n)] + 1e-4 * rng.standard_normal((n, d))
    elif family == "ties":  # a coarse integer grid: many equal distances
        p = rng.integers(0, 4, (n, d)).astype(np.float64)
    elif family == "wide_range":  # rows over six orders of magnitude
        p = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
    else:
        raise ValueError(f"unknown data family {family!r}; one of {FAMILIES}")
    return p.astype(np.float32)


def _f64(a):
    return np.asarray(a, np.float64)


def sqdist64(q, x):
    """Squared distances of every row of q to every row of x, in float64."""
    q, x = _f64(q), _f64(x)
    return ((q[:, None, :] - x[None, :, :]) ** 2).sum(-1)


@dataclasses.dataclass(frozen=True)
class Program:
    """A jax program, its float64 reference, and how to make its inputs."""
    name: str
    what: str  # the rewrite or split shape it exercises
    fn: Callable
    reference: Callable  # numpy float64
    make_args: Callable[[str, np.random.Generator], tuple]
    limit: str  # memory_limit, well below the program's need
    indices: bool = False  # output is a set of indices per row


def _knn_fn(x, q):
    return jax.lax.top_k(-jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1), 5)[1]


def _knn_ref(x, q):
    return np.argsort(sqdist64(q, x), axis=1, kind="stable")[:, :5]


def _argmin_fn(x, q):
    return jnp.argmin(jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1), axis=1)[:, None]


def _argmin_ref(x, q):
    return np.argmin(sqdist64(q, x), axis=1)[:, None]


def _kernel_fn(x, q, v):
    d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-d / (2 * 0.5 ** 2)) @ v


def _kernel_ref(x, q, v):
    return np.exp(-sqdist64(q, x) / (2 * 0.5 ** 2)) @ _f64(v)


def _db_args(d):
    def make(family, rng):
        x = points(family, rng, 4000, d)
        q = x[rng.integers(0, 4000, 64)] + points(family, rng, 64, d) * 1e-3 \
            if family == "near_duplicates" else points(family, rng, 64, d)
        return x, q.astype(np.float32)
    return make


def _kernel_args(family, rng):
    x, q = _db_args(3)(family, rng)
    # the kernel is local: queries near the data
    q = (x[rng.integers(0, len(x), len(q))] + 0.3 * rng.standard_normal(q.shape)).astype(np.float32)
    return x, q, rng.standard_normal((len(x), 2)).astype(np.float32)


def _dot_fn(a, b):
    return jnp.sum(a[:, None, :] * b[None, :, :], -1)


def _dot_ref(a, b):
    return _f64(a) @ _f64(b).T


def _chain_fn(a, b, v):
    return (a @ b) @ v


def _chain_ref(a, b, v):
    return (_f64(a) @ _f64(b)) @ _f64(v)


def _matrix_args(family, rng):
    a = points(family, rng, 256, 256)
    b = points(family, rng, 256, 256)
    return a, b, points(family, rng, 256, 2)


def _gram_grad_fn(a, w):
    return jax.grad(lambda a: jnp.sum(w * (a @ a.T)))(a)


def _gram_grad_ref(a, w):
    w = _f64(w)
    return (w + w.T) @ _f64(a)


def _gram_args(family, rng):
    return points(family, rng, 16, 4096).astype(np.float32), \
        rng.standard_normal((16, 16)).astype(np.float32)


def _attention_fn(q, k, v):
    return jax.nn.softmax(q @ k.T / 8.0, -1) @ v


def _attention_ref(q, k, v):
    s = _f64(q) @ _f64(k).T / 8.0
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ _f64(v)


def _attention_args(family, rng):
    # scores must not overflow float32 for jax itself: scale to unit rows
    def unit(p):
        p = p - p.mean(0) if family == "offset" else p
        return (p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-30) * 4).astype(np.float32)
    return unit(points(family, rng, 256, 64)), unit(points(family, rng, 2048, 64)), \
        points(family, rng, 2048, 64)


def _attention_grad(which):
    """The gradient of sum(attention(q, k, v) * g) with respect to k or v:
    split by query rows, they are the loop's accumulated dots dS^T q and
    P^T g (memfit-split's minor-contraction form)."""
    i = "qkv".index(which)

    def fn(q, k, v, g):
        return jax.grad(lambda q, k, v: jnp.sum(_attention_fn(q, k, v) * g), argnums=i)(q, k, v)
    return fn


def _attention_grad_ref(which):
    def ref(q, k, v, g):
        q, k, v, g = _f64(q), _f64(k), _f64(v), _f64(g)
        s = q @ k.T / 8.0
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        if which == "v":
            return p.T @ g
        dp = g @ v.T
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / 8.0
        return ds.T @ q
    return ref


def _attention_input_grad_fn(x, w, g):
    """The gradient of sum(attention(x Wq, x Wk, x Wv) * g) with respect to
    x: split by query rows, dq W_q^T comes from each chunk and dk W_k^T,
    dv W_v^T from the loop's sums, a second pass that reads the first's
    dq W_q^T (memfit-split's stash)."""
    def loss(x):
        return jnp.sum(_attention_fn(x @ w[0], x @ w[1], x @ w[2]) * g)
    return jax.grad(loss)(x)


def _attention_input_grad_ref(x, w, g):
    x, w, g = _f64(x), _f64(w), _f64(g)
    q, k, v = x @ w[0], x @ w[1], x @ w[2]
    s = q @ k.T / 8.0
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = g @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / 8.0
    return (ds @ k) @ w[0].T + (ds.T @ q) @ w[1].T + (p.T @ g) @ w[2].T


def _attention_input_grad_args(family, rng):
    x = points(family, rng, 2048, 64)
    x = x - x.mean(0) if family == "offset" else x
    x = (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30) * 2).astype(np.float32)
    w = (rng.standard_normal((3, 64, 64)) / 8.0).astype(np.float32)
    return x, w, points(family, rng, 2048, 64)


def _attention_grad_args(family, rng):
    q, k, v = _attention_args(family, rng)
    return q, k, v, points(family, rng, 256, 64)


def _decode_fn(q, k, v):
    """One decode step's attention over [B, S, H, D] caches: both dots are
    batched matrix-vector products whose cache operand has its batch
    dimensions apart (split by positions: memfit-rewrite's batched-gemv)."""
    s = jnp.einsum("bhd,bshd->bhs", q, k) / 8.0
    return jnp.einsum("bhs,bshd->bhd", jax.nn.softmax(s, -1), v)


def _decode_ref(q, k, v):
    s = np.einsum("bhd,bshd->bhs", _f64(q), _f64(k)) / 8.0
    s = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhs,bshd->bhd", s / s.sum(-1, keepdims=True), _f64(v))


def _decode_args(family, rng):
    b, s, h, d = 4, 1024, 4, 16

    def unit(p):  # scores must not overflow float32 for jax itself
        p = p - p.mean(0) if family == "offset" else p
        return (p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-30) * 4).astype(np.float32)
    return (unit(points(family, rng, b * h, d)).reshape(b, h, d),
            unit(points(family, rng, b * s * h, d)).reshape(b, s, h, d),
            points(family, rng, b * s * h, d).reshape(b, s, h, d))


def _gnn_agg(nodes, w, scale, senders, receivers):
    return jax.ops.segment_sum(jax.nn.relu(nodes[senders] @ w) * scale[:, None], receivers,
                               num_segments=nodes.shape[0])


def _gnn_loss_fn(nodes, w, scale, senders, receivers):
    """jraph-style message passing and a sum of squares: the forward
    segment_sum is split by edges, the loss reduced after the loop (its
    short dimension first)."""
    return jnp.sum(_gnn_agg(nodes, w, scale, senders, receivers) ** 2)


def _gnn_grad_fn(nodes, w, scale, senders, receivers):
    """The loss's gradient in the nodes: the backward loop gathers the
    cotangent 2 * agg by receivers (gathered before the doubling)."""
    return jax.grad(_gnn_loss_fn)(nodes, w, scale, senders, receivers)


def _gnn_ref_parts(nodes, w, scale, senders, receivers):
    pre = _f64(nodes)[senders] @ _f64(w)
    msg = np.maximum(pre, 0.0) * _f64(scale)[:, None]
    agg = np.zeros((len(nodes), msg.shape[1]))
    np.add.at(agg, receivers, msg)
    return pre, agg


def _gnn_loss_ref(nodes, w, scale, senders, receivers):
    return np.sum(_gnn_ref_parts(nodes, w, scale, senders, receivers)[1] ** 2)


def _gnn_grad_ref(nodes, w, scale, senders, receivers):
    pre, agg = _gnn_ref_parts(nodes, w, scale, senders, receivers)
    dpre = (2.0 * agg)[receivers] * _f64(scale)[:, None] * (pre > 0)
    grad = np.zeros((len(nodes), nodes.shape[1]))
    np.add.at(grad, senders, dpre @ _f64(w).T)
    return grad


def _gnn_args(family, rng):
    n, e, d = 1024, 65536, 16
    return (points(family, rng, n, d), (rng.standard_normal((d, d)) / 4).astype(np.float32),
            rng.random(e).astype(np.float32), rng.integers(0, n, e).astype(np.int32),
            rng.integers(0, n, e).astype(np.int32))


def _xent_fn(h, w, labels):
    logits = h @ w
    return jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0]


def _xent_ref(h, w, labels):
    z = _f64(h) @ _f64(w)
    m = z.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(-1, keepdims=True)))[:, 0]
    return lse - z[np.arange(len(z)), labels]


def _xent_args(family, rng):
    h = points(family, rng, 128, 32)
    h = (h / np.maximum(np.abs(h).max(), 1e-30)).astype(np.float32)
    return h, points(family, rng, 32, 8192) / 4, rng.integers(0, 8192, 128).astype(np.int32)


def _two_axis_fn(a, b):
    """A contrastive loss's normalisers: logsumexp over the rows and over the
    columns of one matrix (the columns' max and sum in one online pass)."""
    s = a @ b.T
    return jnp.concatenate([jax.nn.logsumexp(s, 1), jax.nn.logsumexp(s, 0)])


def _lse64(z, axis):
    m = z.max(axis, keepdims=True)
    return np.squeeze(m + np.log(np.exp(z - m).sum(axis, keepdims=True)), axis)


def _two_axis_ref(a, b):
    z = _f64(a) @ _f64(b).T
    return np.concatenate([_lse64(z, 1), _lse64(z, 0)])


def _two_axis_grad_fn(a, b):
    """Its gradient in a: both softmaxes, recomputed in a second pass with
    the final maxima and sums (they must still sum to one)."""
    return jax.grad(lambda a: jnp.sum(_two_axis_fn(a, b)))(a)


def _two_axis_grad_ref(a, b):
    z = _f64(a) @ _f64(b).T
    rows = np.exp(z - _lse64(z, 1)[:, None])
    cols = np.exp(z - _lse64(z, 0)[None, :])
    return (rows + cols) @ _f64(b)


def _two_axis_args(family, rng):
    a, b = points(family, rng, 2048, 16), points(family, rng, 2048, 16)
    # logits within float32's exp range after the shift, spread by the family
    scale = 16.0 / max(float(np.abs(a).max() * np.abs(b).max()), 1e-30)
    return (a * np.float32(np.sqrt(scale))).astype(np.float32), \
        (b * np.float32(np.sqrt(scale))).astype(np.float32)


def _gp_fn(z, x, y):
    """GP posterior mean at x from inducing points z (Cholesky, solves)."""
    kzz = jnp.exp(-jnp.sum((z[:, None] - z[None]) ** 2, -1) / 2) + 1e-3 * jnp.eye(z.shape[0])
    kxz = jnp.exp(-jnp.sum((x[:, None] - z[None]) ** 2, -1) / 2)
    l = jnp.linalg.cholesky(kzz)
    a = jax.scipy.linalg.solve_triangular(l, kxz.T, lower=True)
    return a.T @ jax.scipy.linalg.solve_triangular(l, y, lower=True)


def _gp_ref(z, x, y):
    z, x, y = _f64(z), _f64(x), _f64(y)
    kzz = np.exp(-sqdist64(z, z) / 2) + 1e-3 * np.eye(len(z))
    kxz = np.exp(-sqdist64(x, z) / 2)
    l = np.linalg.cholesky(kzz)
    return np.linalg.solve(l, kxz.T).T @ np.linalg.solve(l, y)


def _gp_args(family, rng):
    x = points(family, rng, 8192, 3)
    z = x[rng.choice(len(x), 64, replace=False)]  # inducing points from the data
    return z, x, rng.standard_normal((64, 1)).astype(np.float32)


PROGRAMS = (
    Program("knn_top_k", "distance (exact kNN) + split", _knn_fn, _knn_ref,
            _db_args(3), "512KiB", indices=True),
    Program("knn_argmin", "split (variadic argmin)", _argmin_fn, _argmin_ref,
            _db_args(2), "1MiB", indices=True),
    Program("gauss_kernel", "split (kernel sum)", _kernel_fn, _kernel_ref,
            _kernel_args, "512KiB"),
    Program("reduce_to_dot", "reduce-to-dot", _dot_fn, _dot_ref,
            lambda f, r: (points(f, r, 256, 32), points(f, r, 512, 32)), "1MiB"),
    Program("matrix_chain", "matrix-chain", _chain_fn, _chain_ref, _matrix_args, "2MiB"),
    Program("gram_gradient", "factor-sums", _gram_grad_fn, _gram_grad_ref, _gram_args, "2MiB"),
    Program("attention", "split (softmax by queries)", _attention_fn, _attention_ref,
            _attention_args, "2MiB"),
    Program("attention_key_grad", "split (accumulated dS^T q, minor-contraction)",
            _attention_grad("k"), _attention_grad_ref("k"), _attention_grad_args, "4MiB"),
    Program("attention_value_grad", "split (accumulated P^T g, minor-contraction)",
            _attention_grad("v"), _attention_grad_ref("v"), _attention_grad_args, "4MiB"),
    Program("attention_input_grad", "split (second pass reading the first's stash)",
            _attention_input_grad_fn, _attention_input_grad_ref, _attention_input_grad_args,
            "5MiB"),
    Program("kv_decode", "split (online softmax by positions) + batched-gemv", _decode_fn,
            _decode_ref, _decode_args, "2304KiB"),
    Program("gnn_loss", "split (segment_sum by edges), short dimension reduced first",
            _gnn_loss_fn, _gnn_loss_ref, _gnn_args, "1536KiB"),
    Program("gnn_grad", "split (segment_sum, then its gradient gathered by receivers)",
            _gnn_grad_fn, _gnn_grad_ref, _gnn_args, "1536KiB"),
    Program("cross_entropy", "split (logsumexp over vocabulary)", _xent_fn, _xent_ref,
            _xent_args, "2MiB"),
    Program("gp_mean", "split (triangular solve, ill-conditioned Kzz)", _gp_fn, _gp_ref,
            _gp_args, "2MiB"),
    Program("two_axis_logsumexp", "split (online logsumexp over the split rows)",
            _two_axis_fn, _two_axis_ref, _two_axis_args, "2MiB"),
    Program("two_axis_logsumexp_grad", "split (online logsumexp, then a second pass)",
            _two_axis_grad_fn, _two_axis_grad_ref, _two_axis_args, "2MiB"),
)


@dataclasses.dataclass
class Outcome:
    program: str
    family: str
    seed: int
    jax_error: float  # relative error, or the fraction of rows that differ
    memfit_error: float
    ok: bool
    detail: str = ""


def float64_outputs(fn, args):
    """``fn``'s outputs evaluated in float64: floating arguments (any pytree)
    widened, integer ones (labels, a step count) as they are; numpy arrays
    in ``fn``'s output structure."""
    def wide(a):
        a = np.asarray(a)
        return jnp.asarray(a, jnp.float64) if np.issubdtype(a.dtype, np.floating) else a
    with jax.enable_x64(True):
        out = jax.jit(fn)(*jax.tree_util.tree_map(wide, args))
        return jax.tree_util.tree_map(np.asarray, out)


def relative_error(got, ref) -> float:
    got, ref = _f64(got), _f64(ref)
    scale = max(float(np.max(np.abs(ref))), 1e-300)
    err = np.abs(got - ref)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(err)) / scale


def _row_sets(a):
    return [frozenset(r) for r in np.asarray(a).reshape(len(a), -1).tolist()]


def judge(program: Program, family: str, seed: int, got_jax, got_memfit, ref) -> Outcome:
    """The contract for one case."""
    if program.indices:
        j, m, r = _row_sets(got_jax), _row_sets(got_memfit), _row_sets(ref)
        rows_j = sum(a != b for a, b in zip(j, r)) / len(r)
        rows_m = sum(a != b for a, b in zip(m, r)) / len(r)
        # wherever jax agrees with float64, memfit must too
        bad = [i for i, (a, b, c) in enumerate(zip(j, m, r)) if a == c and b != c]
        return Outcome(program.name, family, seed, rows_j, rows_m, not bad,
                       f"rows {bad[:5]} differ where jax is right" if bad else "")
    ej, em = relative_error(got_jax, ref), relative_error(got_memfit, ref)
    ok = em <= FACTOR * ej + FLOOR_ULPS * EPS32
    return Outcome(program.name, family, seed, ej, em, ok,
                   "" if ok else f"memfit {em:.2e} > {FACTOR} x jax {ej:.2e} + {FLOOR_ULPS} ulp")


class Runner:
    """Compiles each program once (jax and memfit) and checks cases."""

    def __init__(self, rewrite: bool = True):
        import memfit
        self._jax = {p.name: jax.jit(p.fn) for p in PROGRAMS}
        self._memfit = {p.name: memfit.jit(p.fn, memory_limit=p.limit, rewrite=rewrite)
                        for p in PROGRAMS}

    def case(self, program: Program, family: str, seed: int) -> Outcome:
        rng = np.random.default_rng([seed, FAMILIES.index(family), PROGRAMS.index(program)])
        args = program.make_args(family, rng)
        got_jax = np.asarray(self._jax[program.name](*args))
        got_memfit = np.asarray(self._memfit[program.name](*args))
        return judge(program, family, seed, got_jax, got_memfit, program.reference(*args))

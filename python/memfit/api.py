"""memfit.jit and memfit.profile."""
from __future__ import annotations

import functools
import inspect
import math
import os
import time
from collections import Counter
from typing import Any, Callable, Sequence

import jax

from . import _core
from .errors import MemfitError
from .explain.profiling import ProfileReport, profile_text  # noqa: F401 (memfit.api.profile_text)
from .msa.offload import METHODS as OFFLOAD_METHODS
from .msa.solvers.portfolio import DEFAULT_SECONDS as OFFLOAD_SECONDS
from .transform import pipeline_for, transform


def _normalize_static(fun, static_argnums, static_argnames):
    """jax.jit's rule: names and positions of static arguments imply each other."""
    nums = () if static_argnums is None else (
        (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums))
    names = () if static_argnames is None else (
        (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames))
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return set(nums), set(names)
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    n = len(positional)
    nums = {i + n if i < 0 else i for i in nums}
    names = set(names) | {positional[i] for i in nums if i < n}
    nums |= {positional.index(nm) for nm in names if nm in positional}
    return nums, names


def _leaf_key(x):
    # runs for every argument of every call: the dtype object itself, not
    # str(dtype) (numpy builds that string each time; it was most of the
    # 180 us a call spent here on a 12-array pytree)
    if isinstance(x, jax.Array):
        return ("array", x.shape, x.dtype, x.weak_type, x.sharding)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ("array", tuple(x.shape), x.dtype, bool(getattr(x, "weak_type", False)), None)
    return ("py", type(x))


# XLA:CPU's ynn fusions (on by default) do not count their scratch in
# memory_analysis (DESIGN.md). Calibration compiles for XLA's count without
# them; the kept program is then compiled again to run in the configuration
# the user runs.
def _accounting_options() -> dict | None:
    """Compiler options under which XLA's memory analysis counts every byte,
    or None when the default compile already does."""
    if jax.default_backend() != "cpu":
        return None
    from .measure import ACCOUNTING_OPTIONS, NO_YNN
    if NO_YNN in os.environ.get("XLA_FLAGS", "").split():
        return None  # ynn fusions already off in this process
    return ACCOUNTING_OPTIONS


#: XLA compiles memfit.jit started in this process, by what they are for:
#: "count" (a calibration compile read only for XLA's memory counts: its
#: executable never runs), "run" (an executable that may run) and "lean"
#: (a split compiled with ynn fusions of dots only). Tests read it.
COMPILES: Counter = Counter()
#: their seconds, by the same kinds (benches read it)
COMPILE_SECONDS: Counter = Counter()

#: Added to a compile whose executable never runs (the calibration's memory
#: counts, when the executable that runs is compiled separately): LLVM at
#: -O0 without its expensive passes. XLA assigns buffers on HLO, before
#: LLVM, so memory_analysis() is the same (test_compile_cache.py checks it
#: on split programs); the compile takes about half the time.
COUNT_ONLY_OPTIONS = {"xla_backend_optimization_level": 0,
                      "xla_llvm_disable_expensive_passes": True}


def _counted(kind: str, compile_fn):
    def compile_and_count(*args, **kwargs):
        COMPILES[kind] += 1
        t = time.perf_counter()
        try:
            return compile_fn(*args, **kwargs)
        finally:
            COMPILE_SECONDS[kind] += time.perf_counter() - t
    return compile_and_count


def _count_options(options: dict | None) -> dict | None:
    """Options for a calibration compile: the accounting options, with cheap
    code generation when the executable that runs is compiled separately
    (``options`` not None); else the run configuration itself."""
    return None if options is None else {**options, **COUNT_ONLY_OPTIONS}


def _lean_compile(lowered_for):
    """text -> (executable, what its options are): the split program with
    ynn fusions of dots only, which the calibration runs instead of the
    default when that is over the limit and XLA assigns this fewer bytes
    (memfit.calibrate._compile_as_run).
    None where the user chose the ynn fusions (XLA_FLAGS) or off CPU."""
    if _accounting_options() is None or "ynn_fusion_type" in os.environ.get("XLA_FLAGS", ""):
        return None
    compile_lean = _counted("lean", lambda text: lowered_for(text).compile(
        compiler_options=_options_named(LEAN)))
    return lambda text: (compile_lean(text), LEAN)


#: Attempt.run_options of a split run with ynn fusions of dots only
LEAN = "ynn fusions of dots only"


def _options_named(name: str | None) -> dict | None:
    """The compiler options an Attempt.run_options name stands for (None:
    the user's flags)."""
    if name is None:
        return None
    if name != LEAN:
        raise ValueError(f"unknown run options {name!r}")
    from .measure import YNN_DOTS_ONLY_OPTIONS
    return YNN_DOTS_ONLY_OPTIONS


def _runtime_scratch():
    """executable -> bytes its runtime allocates beyond XLA's count, on the
    backends where memfit knows them (CPU: memfit.runtime_scratch)."""
    if jax.default_backend() != "cpu":
        return None
    from .runtime_scratch import dot_scratch_bytes
    return lambda compiled: dot_scratch_bytes(compiled.as_text())


def _modelled_peak(text: str) -> float:
    """The fusion model's peak bytes of the module's entry function (inf
    when the model cannot profile it: nothing is taken on trust then)."""
    try:
        reports = profile_text(text, top=1)
    except MemfitError:
        return float("inf")
    main = [r for r in reports if r.name == "main"]
    return max((r.peak_bytes for r in (main or reports)), default=float("inf"))


class _ChosenLowered:
    """jax's Lowered of memfit's module, whose ``compile()`` returns the
    executable memfit.jit runs. That executable may have been compiled with
    other options than a plain ``compile()`` would use (the calibration can
    run a split with ynn fusions of dots only: memfit.calibrate), so
    ``f.lower(x).compile()(x)`` runs what ``f(x)`` runs. With compiler
    options, or any other attribute, it is jax's Lowered."""

    def __init__(self, lowered, compiled):
        self._lowered, self._compiled = lowered, compiled

    def compile(self, compiler_options=None, **kwargs):
        if compiler_options is None and not kwargs:
            return self._compiled
        return self._lowered.compile(compiler_options, **kwargs)

    def __getattr__(self, name):
        return getattr(self._lowered, name)


_MEMORY_FIELDS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
                  "temp_size_in_bytes")


class _RecordedAnalysis:
    """Stands for the accounting executable of a cache entry: its
    ``memory_analysis()`` is the one measured when the entry was written."""

    def __init__(self, memory: dict):
        import types
        self._memory = types.SimpleNamespace(**memory)

    def memory_analysis(self):
        return self._memory


class MemfitJitted:
    """A function compiled by XLA after memfit's passes. Made by memfit.jit."""

    def __init__(self, fun: Callable, *, passes: str | None, memory_limit,
                 rewrite: bool = True, offload: str | bool | None = None,
                 calibrate: bool = True, isolate: bool = False, cache: bool = True,
                 time_budget: float | None = None, **jit_kwargs):
        self._fun = fun
        self._transform = functools.partial(transform, isolate=isolate)
        if offload is True:
            offload = "auto"
        if offload is not None and offload is not False:
            if offload not in OFFLOAD_METHODS:
                raise ValueError(f"offload must be True or one of {OFFLOAD_METHODS}, "
                                 f"not {offload!r}")
            if memory_limit is None:
                raise ValueError("offload= needs memory_limit= (the device capacity)")
        else:
            offload = None
        if time_budget is not None:
            if offload is None:
                raise ValueError("time_budget= is the offload placement's wall time: "
                                 "it needs offload=")
            if not (isinstance(time_budget, (int, float)) and time_budget > 0):
                raise ValueError(f"time_budget must be a positive number of seconds, "
                                 f"not {time_budget!r}")
        elif offload is not None:
            time_budget = OFFLOAD_SECONDS
        self.offload = offload
        # math.inf: no budget (each method's own length)
        self.time_budget = None if time_budget == math.inf else time_budget
        self._passes, self._rewrite = passes, rewrite
        self.memory_limit = memory_limit
        self.pipeline = self._pipeline()
        self.calibrate = calibrate and memory_limit is not None and offload is None
        self._disk_cache = cache  # memfit.compile_cache, when the environment allows it
        #: memfit.calibrate.Calibration of the latest compile (None when not
        #: calibrated): the margins tried and what XLA accounted for each.
        self.last_calibration = None
        self._record = None  # memfit.explain.split.JitRecord of the latest compile
        self._jit_kwargs = jit_kwargs
        self._jitted = jax.jit(fun, **jit_kwargs)
        self._static_nums, self._static_names = _normalize_static(
            fun, jit_kwargs.get("static_argnums"), jit_kwargs.get("static_argnames"))
        self._cache: dict[Any, Any] = {}
        functools.update_wrapper(self, fun)

    # -- lowering ---------------------------------------------------------
    def lower(self, *args, **kwargs):
        """Like jax.jit(f).lower(...), with memfit's pipeline applied to the
        module (``.as_text()`` shows the transformed StableHLO). With a
        memory limit this already compiles (see ``calibrate``), so that the
        module shown is the one that runs; calling the function afterwards
        with arguments of the same shapes reuses that executable, and so
        does ``.compile()`` of the result, without compiler options."""
        return _ChosenLowered(*self._lowered_and_compiled(args, kwargs))

    def _lower_and_compile(self, args, kwargs):
        """(lowered, compiled or None): the calibrated split compiles."""
        from . import _jax_handover as handover
        lowered = self._jitted.lower(*args, **kwargs)
        base = handover.module_text(lowered)
        if not self.calibrate:
            text = self._recorded(base, args, kwargs,
                                  lambda: self._transform(base, self.pipeline))
            if self.offload:
                from .msa.offload import offload_pipeline
                text = offload_pipeline(text, self.memory_limit, self.offload,
                                        time_budget=self.time_budget)
            return handover.replace_module(lowered, text), None
        options = _accounting_options()
        lowered_for = lambda text: handover.replace_module(lowered, text)  # noqa: E731
        slot = self._cache_slot(lowered, options)
        entry = slot.load() if slot is not None else None
        if entry is not None:
            try:
                done = self._from_cache(entry, base, args, kwargs, lowered_for)
                slot.used(entry)
                return done
            except Exception as e:  # noqa: BLE001 - an unusable entry: calibrate afresh
                slot.ignore(e)
        lowered, compiled = self._calibrated(base, args, kwargs, lowered_for, options)
        if slot is not None:
            self._save(slot, lowered, compiled)
        return lowered, compiled

    def _calibrated(self, base, args, kwargs, lowered_for, options):
        """(lowered, compiled): memfit.calibrate's search for the margin."""
        from .calibrate import calibrate
        count_options = _count_options(options)
        cal = self._recorded(base, args, kwargs, lambda: calibrate(
            lambda m: self._transform(base, self._pipeline(temp_margin=m)),
            _counted("count" if options is not None else "run",
                     lambda text: lowered_for(text).compile(compiler_options=count_options)),
            self._limit_bytes(),
            scratch=_runtime_scratch(),
            compile_run=None if options is None else _counted(
                "run", lambda text: lowered_for(text).compile()),
            compile_lean=_lean_compile(lowered_for),
            modelled_peak=None if options is None else _modelled_peak))
        self.last_calibration = cal
        kept = lowered_for(cal.kept.text)
        if cal.kept.run_compiled is not None:
            return kept, cal.kept.run_compiled
        return kept, (cal.kept.compiled if options is None else _counted("run", kept.compile)())

    # -- the persistent calibration cache (memfit.compile_cache) -----------
    def _cache_slot(self, lowered, options):
        if not self._disk_cache:
            return None
        from . import _jax_handover as handover
        from . import compile_cache
        return compile_cache.slot({
            "program": handover.module_text(lowered, debug_info=False),
            "shardings": handover.shardings(lowered),
            "limit": self._limit_bytes(), "passes": self._passes, "rewrite": self._rewrite,
            "accounting": options, "count_only": COUNT_ONLY_OPTIONS})

    def _save(self, slot, lowered, compiled):
        """Writes the calibration's outcome (and the executable, when jax can
        serialize it) under ``slot``."""
        from . import _jax_handover as handover
        from . import compile_cache
        cal = self.last_calibration
        kept = cal.kept
        if kept.xla_bytes is None:
            return  # no memory analysis on this backend: nothing to reuse
        memory = kept.compiled.memory_analysis()
        payload, devices = (compile_cache.serialize(compiled)
                            if handover.executable_is_portable(lowered) else (None, None))
        slot.save({
            "margin": kept.margin, "xla_bytes": kept.xla_bytes, "fixed_bytes": kept.fixed_bytes,
            "memory": {f: int(getattr(memory, f)) for f in _MEMORY_FIELDS},
            "run_xla_bytes": kept.run_xla_bytes, "scratch_bytes": kept.scratch_bytes,
            "run_options": kept.run_options, "accounted": kept.accounted,
            "devices": devices,
            "summary": cal.summary(), "compiles": len(cal.attempts),
        }, kept.text, payload)

    def _from_cache(self, entry, base, args, kwargs, lowered_for):
        """(lowered, compiled) from a cache entry: the kept text, and its
        executable deserialized, or compiled once as it runs."""
        from . import compile_cache
        from .calibrate import Attempt, Calibration, _choose
        rec = entry.record
        kept = lowered_for(entry.text)
        t = time.perf_counter()
        if entry.executable is not None:
            compiled = compile_cache.deserialize(entry.executable, rec["devices"], kept)
        else:
            compiled = _counted("run", kept.compile)(
                compiler_options=_options_named(rec["run_options"]))
        cal = Calibration(self._limit_bytes(), cached=True)
        cal.attempts.append(Attempt(
            rec["margin"], entry.text, _RecordedAnalysis(rec["memory"]), rec["xla_bytes"],
            rec["fixed_bytes"], 0.0, time.perf_counter() - t,
            scratch_bytes=rec.get("scratch_bytes"), run_compiled=compiled,
            run_xla_bytes=rec.get("run_xla_bytes"), run_options=rec.get("run_options"),
            accounted=rec.get("accounted", True)))
        first = str(rec.get("summary", "")).split("; ", 1)[-1]
        cal.skipped.append((None, f"from memfit's calibration cache (written after: {first})",
                            0.0))
        _choose(cal)  # the same warning as the first compile when it did not fit
        self._recorded(base, args, kwargs, lambda: cal)
        self.last_calibration = cal
        return kept, compiled

    def _limit_bytes(self) -> int:
        from .units import parse_memory_size
        return parse_memory_size(self.memory_limit)

    def _recorded(self, base, args, kwargs, split):
        """Runs ``split()`` (text or Calibration) and keeps what f.report()
        needs, failures included (they report the smallest reachable limit)."""
        from . import _jax_handover as handover
        from .explain.split import JitRecord
        if self.memory_limit is None or self.offload:
            return split()
        # Lowered objects are handed memfit's module in place: lower afresh
        # (jax caches it) to compile jax's own program and memfit's kept one,
        # from shapes only, so the record keeps no argument alive.
        args, kwargs = self._abstract(args, kwargs)
        lower = lambda: self._jitted.lower(*args, **kwargs)  # noqa: E731
        # both sides counted under the accounting options, as the calibration
        # counts: with ynn fusions on, XLA leaves their scratch out of "before";
        # the report only reads their memory analysis (count-only compiles)
        options = _count_options(_accounting_options())
        record = JitRecord(base, self._limit_bytes(),
                           _counted("count", lambda: lower().compile(compiler_options=options)),
                           _counted("count", lambda text: handover.replace_module(
                               lower(), text).compile(compiler_options=options)))
        self._record = record
        try:
            result = split()
        except MemfitError as e:
            record.error = e
            raise
        if isinstance(result, str):
            record.kept = result
        else:
            record.calibration = result
        return result

    def _abstract(self, args, kwargs):
        """The arguments with every non-static array as its ShapeDtypeStruct."""
        def spec(x):
            if not (hasattr(x, "shape") and hasattr(x, "dtype")):
                return x
            sharding = x.sharding if isinstance(x, jax.Array) else None
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding,
                                        weak_type=bool(getattr(x, "weak_type", False)))
        args = tuple(a if i in self._static_nums else jax.tree_util.tree_map(spec, a)
                     for i, a in enumerate(args))
        kwargs = {k: v if k in self._static_names else jax.tree_util.tree_map(spec, v)
                  for k, v in kwargs.items()}
        return args, kwargs

    def report(self):
        """memfit.explain.split.SplitReport of the latest compile: what pushed the
        program over the limit, the loops memfit made, rewrites, margins and
        XLA's bytes before and after (``.table()``, ``.to_json()``,
        ``.plot(path)``). Also after a compile that could not meet the limit."""
        if self._record is None:
            raise MemfitError("report(): nothing compiled yet; call or lower the function "
                              "first (with memory_limit=, without offload=)")
        return self._record.report()

    def _pipeline(self, temp_margin: float | None = None) -> str:
        # With offload, the limit is the device capacity the placement must
        # respect; buffers move to host memory instead of being split.
        limit = None if self.offload else self.memory_limit
        return pipeline_for(self._passes, limit, self._rewrite, temp_margin=temp_margin)

    def _split_static(self, args, kwargs):
        if not (self._static_nums or self._static_names):  # every call: keep it cheap
            return args, kwargs, (), ()
        dyn_args = tuple(a for i, a in enumerate(args) if i not in self._static_nums)
        static_args = tuple((i, a) for i, a in enumerate(args) if i in self._static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_names}
        static_kwargs = tuple(sorted((k, v) for k, v in kwargs.items()
                                     if k in self._static_names))
        return dyn_args, dyn_kwargs, static_args, static_kwargs

    def _check_not_traced(self, leaves):
        from . import _jax_handover as handover
        for leaf in leaves:
            if handover.is_tracer(leaf):
                raise MemfitError(
                    f"memfit.jit({getattr(self._fun, '__name__', 'f')}) was called "
                    "inside a jax transformation (jax.grad, jax.vmap, or an outer "
                    "jax.jit). memfit compiles a whole program and cannot be "
                    "differentiated or traced from outside: put memfit.jit around "
                    "the whole computation instead, e.g. "
                    "memfit.jit(train_step) where train_step calls jax.grad.")

    def _lowered_and_compiled(self, args, kwargs):
        """(lowered, executable) for these arguments, cached by their
        shapes, dtypes, shardings and static values like jax.jit's cache."""
        dyn_args, dyn_kwargs, static_args, static_kwargs = self._split_static(args, kwargs)
        leaves, treedef = jax.tree_util.tree_flatten((dyn_args, dyn_kwargs))
        self._check_not_traced(leaves)
        try:
            key = (treedef, tuple(_leaf_key(x) for x in leaves), static_args, static_kwargs)
            hash(key)
        except TypeError:
            key = None
        hit = self._cache.get(key) if key is not None else None
        if hit is not None:
            return hit
        lowered, compiled = self._lower_and_compile(args, kwargs)
        if compiled is None:
            compiled = _counted("run", lowered.compile)()
        if key is not None:
            self._cache[key] = (lowered, compiled)
        return lowered, compiled

    def __call__(self, *args, **kwargs):
        dyn_args, dyn_kwargs, _, _ = self._split_static(args, kwargs)
        compiled = self._lowered_and_compiled(args, kwargs)[1]
        return compiled(*dyn_args, **dyn_kwargs)


def jit(fun: Callable | None = None, *, passes: str | None = None,
        memory_limit: int | str | None = None, rewrite: bool = True,
        offload: str | bool | None = None, calibrate: bool = True, isolate: bool = False,
        cache: bool = True, time_budget: float | None = None, **jit_kwargs):
    """Like ``jax.jit``, with memfit's passes between lowering and XLA.

    ``memory_limit`` (bytes, or "256MiB", "1GB") makes memfit split what does
    not fit, after memfit's algebraic rewrites (``rewrite=False`` skips them:
    they change rounding, see the README); ``passes`` adds an explicit pass
    list. ``offload=True`` (or "auto": heuristic, local search, CP-SAT and
    iterated local search within the budget, the fastest valid placement
    kept; memfit.msa.solvers.portfolio) or ``offload="heuristic"|"exact"|
    "learned"`` (XLA-style, CP-SAT, or the trained player of
    memfit.msa.learned) instead keeps the program whole and moves buffers to
    host memory so that device memory stays within ``memory_limit`` (jax's
    ``annotate_device_placement``; honoured by XLA on GPUs);
    ``time_budget`` (seconds, default ``OFFLOAD_SECONDS`` = 10) bounds the
    placement's wall time, the best valid placement found by then kept; "auto"
    spends all of it unless CP-SAT proves its placement optimal first
    (``memfit assign --time-budget``; ``math.inf``: each method's own length,
    minutes for "learned"). With a ``memory_limit``, memfit checks the compiled program
    against XLA's memory analysis and re-splits with calibrated chunk sizes
    when XLA holds much less than the limit (bigger chunks are faster) or
    more (see memfit.calibrate; up to 3 margins, ``calibrate=False`` for
    one compile). With jax's default flags on CPU each margin's count is a
    compile with ynn fusions off and cheap code generation (LLVM -O0: the
    same buffers, about half the time), and the program kept is compiled
    once more as it runs; where ynn fusions are already off the count's
    compile is the executable that runs. A program split into one loop
    starts from the fusion model's own margin, with a chunk that divides
    its dimension; one memfit leaves unsplit, far under the limit by the
    model and by XLA's count as it runs, is compiled once (as it runs).

    The calibration's outcome is cached on disk (``memfit.compile_cache``):
    the kept program, its margin and XLA's counts, and its executable, keyed
    by the program (without source locations), the limit and options, the
    shardings, ``XLA_FLAGS``, jax's configuration, the memfit/jax/jaxlib
    versions and memfit's own files, the devices and the CPU. A later call
    in any process with the same key compiles nothing (``last_calibration``
    then has ``cached=True``). Directory: ``$MEMFIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/memfit``, else ``~/.cache/memfit``; ``MEMFIT_CACHE=0``
    or ``cache=False`` turn it off, ``MEMFIT_CACHE_EXECUTABLES=0`` keeps
    only the records (a hit then compiles once). An unreadable entry is
    ignored with a ``memfit.compile_cache.CacheWarning``. Loading an
    executable runs code from that directory: trust it as jax's cache.
    ``isolate=True`` runs memfit's passes in a child process, so that
    even an MLIR fatal error raises MemfitError here (see memfit.transform).
    Every other keyword
    (static_argnums, static_argnames, donate_argnums, in_shardings,
    out_shardings, ...) goes to ``jax.jit``. Usable as a decorator with or
    without arguments.

    Sharded programs (``in_shardings``/``out_shardings``, or arguments that
    are ``jax.Array``s placed with a ``NamedSharding``): ``memory_limit`` is
    per device. memfit counts each device's shard, chunks only dimensions
    that are not sharded, keeps every ``sdy`` sharding and constraint, and
    XLA's SPMD partitioner partitions the result; the calibration reads the
    partitioned executable's per-device ``memory_analysis()``.
    """
    if fun is None:
        return lambda f: MemfitJitted(f, passes=passes, memory_limit=memory_limit,
                                      rewrite=rewrite, offload=offload,
                                      calibrate=calibrate, isolate=isolate, cache=cache,
                                      time_budget=time_budget, **jit_kwargs)
    return MemfitJitted(fun, passes=passes, memory_limit=memory_limit, rewrite=rewrite,
                        offload=offload, calibrate=calibrate, isolate=isolate, cache=cache,
                        time_budget=time_budget, **jit_kwargs)


def profile(fun: Callable, *, top: int = 5, **jit_kwargs):
    """``memfit.profile(f)(*args)``: the fusion-aware memory profile of the
    program jax.jit would compile for these arguments (the entry function).
    Accepts a plain function or a memfit.jit/jax.jit-wrapped one."""
    def run(*args, **kwargs) -> ProfileReport:
        from . import _jax_handover as handover
        if isinstance(fun, MemfitJitted):
            lowered = fun.lower(*args, **kwargs)
        else:
            target = fun if hasattr(fun, "lower") else jax.jit(fun, **jit_kwargs)
            lowered = target.lower(*args, **kwargs)
        reports = profile_text(handover.module_text(lowered), top=top)
        main = [r for r in reports if r.name == "main"]
        return (main or reports)[0]
    return run

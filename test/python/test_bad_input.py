"""Bad input never crashes memfit: 100 truncated or corrupted modules derived
from real jax programs (seeded), and 30 that still parse but break an op's
invariants. Each gives a clean memfit.MemfitError (or, for corruptions that
happen to leave a valid module, a result), never an abort or a segfault.

Cases run in batches in a subprocess (bad_input_runner.py) that prints one
line per case: when it dies, the next unreported case is the culprit; it is
recorded and the batch resumes after it."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import memfit
from memfit import _jax_handover as handover

import foundation_programs as progs

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "bad_input_runner.py"
MEMFIT_CLI = str(Path(sys.executable).parent / "memfit")


def layout_program(x):
    # slice, pad, concatenate and sort, for invariants of those ops.
    y = jnp.pad(x[1:7:2], ((1, 0), (0, 2)))
    return jnp.sort(jnp.concatenate([y, y], axis=1), axis=0)


def _texts():
    out = {}
    for name in ["knn", "attention", "gp_solve", "mlp_step", "scan"]:
        fun, make_args = progs.PROGRAMS[name]
        out[name] = jax.jit(fun).lower(*make_args()).compiler_ir("stablehlo")
    out["layout"] = jax.jit(layout_program).lower(
        np.ones((8, 6), np.float32)).compiler_ir("stablehlo")
    return {
        name: (m.operation.get_asm(print_generic_op_form=True),
               m.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))
        for name, m in out.items()
    }


@pytest.fixture(scope="module")
def corpus():
    return _texts()


def run_batch(cases: list[str], tmp_path: Path, timeout: int = 180) -> dict[int, str]:
    """Runs every case; returns {index: status line}. A crash (or a batch
    stuck for `timeout` s) is recorded as `CRASH rc=<returncode> <stderr
    tail>` for the case that was running, and the batch resumes after it."""
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    results: dict[int, str] = {}
    start = 0
    while start < len(cases):
        try:
            p = subprocess.run([sys.executable, str(RUNNER), str(path), str(start)],
                               capture_output=True, text=True, timeout=timeout, cwd=HERE)
            stdout, stderr, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:  # a hang: pinned like a crash
            out = e.stdout or b""
            stdout = out.decode() if isinstance(out, bytes) else out
            stderr, rc = f"no progress for {timeout} s", "timeout"
        done = False
        for line in stdout.splitlines():
            m = re.match(r"CASE (\d+) (.*)", line)
            if m:
                results[int(m.group(1))] = m.group(2)
            elif line == "DONE":
                done = True
        if done and rc == 0:
            break
        crashed = start
        while crashed in results:
            crashed += 1
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        results[crashed] = f"CRASH rc={rc} {tail}"
        start = crashed + 1
    return results


def test_run_batch_pins_a_crash_to_its_case(corpus, tmp_path):
    from bad_input_runner import SELF_TEST_ABORT
    good = corpus["knn"][0]
    results = run_batch([good, SELF_TEST_ABORT, "not mlir", good], tmp_path)
    assert results[0] == "OK" and results[3] == "OK"
    assert results[1].startswith("CRASH rc=-6")
    assert results[2].startswith("ERROR")


# -- 100 truncated or corrupted texts -----------------------------------------

SNIPPETS = ["}", "{", ")", "(", "]", ">", "<{", "}>", "%0", "%arg9", '"stablehlo.add"',
            "tensor<?x4xf32>", "tensor<", "^bb0:", " : () -> ()", "#stablehlo.dot<",
            "loc(", "-1", "99999999999999999999", "dense<", '"', ",", "\n", "array<i64: 7>",
            '"stablehlo.while"(%0) : (tensor<i32>) -> tensor<i32>\n', "#loc", "@main"]
CHARS = '{}()<>[]%",:=0123456789x?-!@#^ \n' + "abcdefghijklmnopqrstuvwxyz"


def corrupt(text: str, kind: str, rng: random.Random) -> str:
    n = len(text)
    i = rng.randrange(n)
    if kind == "truncate":
        return text[:i]
    if kind == "flip":
        return text[:i] + rng.choice(CHARS) + text[i + 1:]
    if kind == "delete":
        return text[:i] + text[i + rng.randint(1, 40):]
    if kind == "insert":
        return text[:i] + rng.choice(SNIPPETS) + text[i:]
    lines = text.splitlines(keepends=True)  # "lines": duplicate or drop a line
    j = rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines.insert(j, lines[j])
    else:
        del lines[j]
    return "".join(lines)


def corrupted_cases(corpus) -> list[tuple[str, str]]:
    rng = random.Random(20261202)
    kinds = ["truncate", "flip", "delete", "insert", "lines"]
    names = sorted(corpus)
    cases = []
    for k in range(100):
        name = names[k % len(names)]
        text = corpus[name][k % 2]  # without and with locations
        kind = kinds[k % len(kinds)]
        cases.append((f"{name}/{kind}/{k}", corrupt(text, kind, rng)))
    return cases


def test_corrupted_texts_never_crash(corpus, tmp_path):
    cases = corrupted_cases(corpus)
    results = run_batch([t for _, t in cases], tmp_path)
    bad = [f"{cases[i][0]}: {r}" for i, r in sorted(results.items())
           if r.startswith(("CRASH", "UNEXPECTED"))]
    assert not bad, "memfit crashed or raised something else than MemfitError:\n" + "\n".join(bad)
    assert len(results) == len(cases)
    # The corruptions must mostly break the module, or this proves little.
    errors = sum(r.startswith("ERROR") for r in results.values())
    assert errors >= 70, f"only {errors} of {len(cases)} corruptions were rejected"


# -- 30 that parse but break an op's invariants -------------------------------

def edit_attr(text: str, op: str, attr: str, new_value: str | None) -> str:
    """In the first `"op"(` line, replace `attr = <value>` (brackets balanced)
    by `attr = new_value`, or drop it when new_value is None."""
    start = text.index(f'"{op}"(')
    a = text.index(f"{attr} = ", start)
    assert "\n" not in text[start:a], f"{attr} not on the {op} line"
    j = a + len(attr) + 3
    depth = 0
    in_str = False
    while True:
        c = text[j]
        if in_str:
            in_str = c != '"'
        elif c == '"':
            in_str = True
        elif c in "<([{":
            depth += 1
        elif c in ">)]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        j += 1
    if new_value is not None:
        return text[:a] + f"{attr} = {new_value}" + text[j:]
    if text[j] == ",":  # `attr = v, next` -> `next`
        return text[:a] + text[j + 2:]
    if text[a - 2:a] == ", ":  # `prev, attr = v` -> `prev`
        return text[:a - 2] + text[j:]
    return text[:a] + text[j:]  # the only entry: `<{}>`


def retype_first_arg(text: str, old: str, new: str) -> str:
    return text.replace(old, new)


def change_arity(text: str, op: str, extra: bool) -> str:
    """Adds an operand to (or drops one from) the first `"op"(...)` line."""
    m = re.search(rf'"{re.escape(op)}"\((%[\w#]+)(, %[\w#]+)?\) : \(([^()]*?)\) ->', text)
    assert m, op
    operands = [m.group(1)] + ([m.group(2)[2:]] if m.group(2) else [])
    types = [t.strip() for t in re.split(r",(?![^<]*>)", m.group(3))]
    if extra:
        operands, types = operands + operands[:1], types + types[:1]
    else:
        operands, types = operands[:-1], types[:-1]
    new = f'"{op}"({", ".join(operands)}) : ({", ".join(types)}) ->'
    return text[:m.start()] + new + text[m.end():]


HANDWRITTEN = {
    "while without regions": (
        'func.func @f(%x: tensor<i32>) -> tensor<i32> {\n'
        '  %0 = "stablehlo.while"(%x) : (tensor<i32>) -> tensor<i32>\n'
        '  return %0 : tensor<i32>\n}\n', "expects 2 regions, got 0"),
    "while with empty regions": (
        'func.func @f(%x: tensor<i32>) -> tensor<i32> {\n'
        '  %0 = "stablehlo.while"(%x) ({}, {}) : (tensor<i32>) -> tensor<i32>\n'
        '  return %0 : tensor<i32>\n}\n', "needs non-empty cond and body regions"),
    "reduce with an odd operand count": (
        'func.func @f(%x: tensor<4xf32>) -> tensor<f32> {\n'
        '  %0 = "stablehlo.reduce"(%x) <{dimensions = array<i64: 0>}> ({\n'
        '  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
        '    "stablehlo.return"(%a) : (tensor<f32>) -> ()\n'
        '  }) : (tensor<4xf32>) -> tensor<f32>\n'
        '  return %0 : tensor<f32>\n}\n', "needs N inputs, N init values and N results"),
    "top_k with one result": (
        'func.func @f(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {\n'
        '  %0 = "chlo.top_k"(%x) <{k = 2 : i64}> : (tensor<4x8xf32>) -> tensor<4x2xf32>\n'
        '  return %0 : tensor<4x2xf32>\n}\n', "expects 2 results, got 1"),
    "dynamic_slice without operands": (
        'func.func @f() -> tensor<2xf32> {\n'
        '  %0 = "stablehlo.dynamic_slice"() <{slice_sizes = array<i64: 2>}> : () -> tensor<2xf32>\n'
        '  return %0 : tensor<2xf32>\n}\n', "needs one start index per operand dimension"),
    "sort without comparator": (
        'func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
        '  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>\n'
        '  return %0 : tensor<4xf32>\n}\n', "expects 1 regions, got 0"),
    "while body returning too few values": (
        'func.func @f(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {\n'
        '  %0:2 = "stablehlo.while"(%i, %x) ({\n'
        '  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):\n'
        '    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
        '    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n'
        '  }, {\n'
        '  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):\n'
        '    "stablehlo.return"(%a) : (tensor<i32>) -> ()\n'
        '  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)\n'
        '  return %0#1 : tensor<4xf32>\n}\n', "body must take 2 arguments and return 2 values"),
    "concatenate without operands": (
        'func.func @f() -> tensor<0xf32> {\n'
        '  %0 = "stablehlo.concatenate"() <{dimension = 0 : i64}> : () -> tensor<0xf32>\n'
        '  return %0 : tensor<0xf32>\n}\n', "needs at least one operand"),
}


def invariant_cases(corpus) -> list[tuple[str, str, str]]:
    """(name, text, expected message) for 30 modules that parse but break an
    op's invariants: derived from jax's own modules, plus handwritten ones."""
    g = {name: texts[0] for name, texts in corpus.items()}
    drop = "is missing its required attribute '{}'"
    bad = "has a malformed attribute '{}'"
    cases = [
        ("knn", "stablehlo.broadcast_in_dim", "broadcast_dimensions", None),
        ("knn", "stablehlo.reduce", "dimensions", None),
        ("knn", "chlo.top_k", "k", None),
        ("knn", "stablehlo.constant", "value", None),
        ("attention", "stablehlo.transpose", "permutation", None),
        ("attention", "stablehlo.dot_general", "dot_dimension_numbers", None),
        ("gp_solve", "stablehlo.custom_call", "call_target_name", None),
        ("gp_solve", "stablehlo.iota", "iota_dimension", None),
        ("gp_solve", "stablehlo.compare", "comparison_direction", None),
        ("scan", "stablehlo.dynamic_slice", "slice_sizes", None),
        ("layout", "stablehlo.slice", "start_indices", None),
        ("layout", "stablehlo.pad", "edge_padding_low", None),
        ("layout", "stablehlo.concatenate", "dimension", None),
        ("layout", "stablehlo.sort", "dimension", None),
        ("knn", "stablehlo.broadcast_in_dim", "broadcast_dimensions", '"0, 1"'),
        ("gp_solve", "stablehlo.iota", "iota_dimension", '"rows"'),
        ("knn", "chlo.top_k", "k", "2.5 : f32"),
        ("gp_solve", "stablehlo.custom_call", "call_target_name", "3 : i32"),
    ]
    out = []
    for prog, op, attr, value in cases:
        text = edit_attr(g[prog], op, attr, value)
        want = drop.format(attr) if value is None else bad.format(attr)
        out.append((f"{prog}: {op} {attr}={value}", text, f"'{op}' {want}"))
    out += [
        ("attention: unreadable dot dims",
         edit_attr(g["attention"], "stablehlo.dot_general", "dot_dimension_numbers", '"dims"'),
         "has unreadable dot_dimension_numbers"),
        ("attention: dot contracting dim out of range",
         g["attention"].replace("rhs_contracting_dimensions = [0]", "rhs_contracting_dimensions = [5]", 1),
         "dimensions out of range or repeated"),
        ("attention: transpose not a permutation",
         edit_attr(g["attention"], "stablehlo.transpose", "permutation", "array<i64: 1, 1>"),
         "has permutation out of range or repeated"),
        ("knn: dynamic shape", retype_first_arg(g["knn"], "tensor<2000x16xf32>", "tensor<?x16xf32>"),
         "has dynamic shape"),
        ("knn: unary op with two operands", change_arity(g["knn"], "stablehlo.negate", extra=True),
         "'stablehlo.negate' expects 1 operands, got 2"),
        ("mlp: binary op with one operand", change_arity(g["mlp_step"], "stablehlo.subtract", extra=False),
         "'stablehlo.subtract' expects 2 operands, got 1"),
    ]
    out += [(f"handwritten: {k}", t, m) for k, (t, m) in HANDWRITTEN.items()]
    assert len(out) == 32
    return out


def test_broken_invariants_give_clean_errors(corpus, tmp_path):
    cases = invariant_cases(corpus)
    results = run_batch([t for _, t, _ in cases], tmp_path)
    problems = []
    for i, (name, _, want) in enumerate(cases):
        r = results.get(i, "missing")
        if not r.startswith("ERROR") or want not in r:
            problems.append(f"{name}: expected an error containing {want!r}, got {r}")
    assert not problems, "\n".join(problems)


def test_cli_opt_exits_with_a_clear_error(corpus, tmp_path):
    for k, (name, text, want) in enumerate(invariant_cases(corpus)[::8]):
        path = tmp_path / f"bad{k}.mlir"
        path.write_text(text)
        r = subprocess.run([MEMFIT_CLI, "opt", str(path), "-p", "memfit-inline,memfit-profile"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 1, (name, r.returncode, r.stderr[-500:])
        assert r.stderr.startswith("memfit: error:") and want in r.stderr, (name, r.stderr)


ODD_BUT_PARSEABLE = [
    # Known ops over non-tensor types, scalars where tensors are usual,
    # unknown ops with regions, zero-sized tensors: no invariant memfit
    # checks is broken, and nothing may crash.
    'func.func @f(%a: i32) -> i32 {\n'
    '  %0 = "stablehlo.add"(%a, %a) : (i32, i32) -> i32\n'
    '  %1 = "stablehlo.exponential"(%0) : (i32) -> i32\n  return %1 : i32\n}\n',
    'func.func @f(%a: f32) -> (f32, i32) {\n'
    '  %0:2 = "chlo.top_k"(%a) <{k = 1 : i64}> : (f32) -> (f32, i32)\n'
    '  return %0#0, %0#1 : f32, i32\n}\n',
    'func.func @f(%a: tensor<0x4xf32>) -> tensor<4x0xf32> {\n'
    '  %0 = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<0x4xf32>) -> tensor<4x0xf32>\n'
    '  return %0 : tensor<4x0xf32>\n}\n',
    'func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
    '  %0 = "mystery.op"(%a) ({\n  ^bb0(%x: tensor<4xf32>):\n'
    '    %1 = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
    '    "mystery.yield"(%1) : (tensor<4xf32>) -> ()\n'
    '  }) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n',
    'func.func @f(%a: tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x1xi32>) {\n'
    '  %0 = "stablehlo.exponential"(%a) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>\n'
    '  %1:2 = "chlo.top_k"(%0) <{k = 1 : i64}> : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x1xi32>)\n'
    '  return %1#0, %1#1 : tensor<2x3x1xf32>, tensor<2x3x1xi32>\n}\n',
    'func.func @f(%i: tensor<i32>) -> tensor<i32> {\n'
    '  %0 = "stablehlo.while"(%i) ({\n  ^bb0(%a: tensor<i32>):\n'
    '    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = 7 : i64}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
    '    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n'
    '  }, {\n  ^bb0(%a: tensor<i32>):\n'
    '    "stablehlo.return"(%a) : (tensor<i32>) -> ()\n'
    '  }) : (tensor<i32>) -> tensor<i32>\n  return %0 : tensor<i32>\n}\n',
]


def _diamond_chain(n: int) -> str:
    # n fused `x + x` ops: a DAG whose paths double at each step.
    t = "tensor<4x4xf32>"
    lines = [f"func.func @f(%a0: {t}) -> {t} {{"]
    for i in range(n):
        lines.append(f'  %a{i + 1} = "stablehlo.add"(%a{i}, %a{i}) : ({t}, {t}) -> {t}')
    lines.append(f'  %d = "stablehlo.dot_general"(%a{n}, %a{n}) <{{dot_dimension_numbers = '
                 f'#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}}>'
                 f' : ({t}, {t}) -> {t}')
    lines += [f"  return %d : {t}", "}"]
    return "\n".join(lines) + "\n"


def _call_tree(levels: int) -> str:
    # Each level calls the next twice: full inlining would be exponential.
    t = "tensor<4xf32>"
    out = []
    for i in range(levels):
        vis = "" if i == 0 else "private "
        out.append(f"func.func {vis}@f{i}(%x: {t}) -> {t} {{\n"
                   f"  %a = func.call @f{i + 1}(%x) : ({t}) -> {t}\n"
                   f"  %b = func.call @f{i + 1}(%a) : ({t}) -> {t}\n"
                   f"  return %b : {t}\n}}")
    out.append(f'func.func private @f{levels}(%x: {t}) -> {t} {{\n'
               f'  %n = "stablehlo.negate"(%x) : ({t}) -> {t}\n  return %n : {t}\n}}')
    return "\n".join(out) + "\n"


ODD_BUT_PARSEABLE += [_diamond_chain(60), _call_tree(40)]


def test_odd_but_parseable_modules_never_crash(tmp_path):
    results = run_batch(ODD_BUT_PARSEABLE, tmp_path)
    bad = [f"case {i}: {r}" for i, r in sorted(results.items())
           if not r.startswith(("OK", "ERROR"))]
    assert not bad, "\n".join(bad)
    assert len(results) == len(ODD_BUT_PARSEABLE)

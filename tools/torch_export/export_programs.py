"""Writes the StableHLO that torch-mlir gives for a few PyTorch modules, as a
new user of memfit would get it, into test/python/data/torch/.

Run once, by hand, in a throwaway environment that has PyTorch and
torch-mlir (the tests only read the committed .mlir files; they never need
torch). On this image (torch 2.13.0 lies on disk for Python 3.11):

    python3.11 -m venv /tmp/torch-venv
    /tmp/torch-venv/bin/pip install torch==2.13.0 torch-mlir==20261001
    /tmp/torch-venv/bin/python tools/torch_export/export_programs.py

Each module goes through ``torch_mlir.fx.export_and_import(module, *args,
output_type="stablehlo")``, the path README.md documents for torch users,
and is printed in generic form (memfit reads StableHLO without the
StableHLO dialect registered) with source locations, made relative to the
repository.
"""
from __future__ import annotations

import importlib.metadata
import math
import os
import sys

import torch
import torch_mlir.fx as fx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "test", "python", "data", "torch")


class SelfAttention(torch.nn.Module):
    """The issue's module: q = k = v, one tensor."""

    def forward(self, x):
        q = k = v = x
        return torch.softmax(q @ k.transpose(-2, -1) / 8, dim=-1) @ v


class Attention(torch.nn.Module):
    """Separate q, k, v; the scale is a Python float (an f64 constant)."""

    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


class Knn(torch.nn.Module):
    """k nearest neighbours by squared distance (torch.topk: a sort)."""

    def forward(self, x, q):
        d = (q * q).sum(-1, keepdim=True) - 2 * q @ x.T + (x * x).sum(-1)
        return torch.topk(d, 8, dim=-1, largest=False)


class GaussianKernel(torch.nn.Module):
    """exp(-|x - z|^2 / (2 l^2)) @ y with l = 0.3 (f64 constants)."""

    def forward(self, x, z, y):
        d = ((x[:, None, :] - z[None, :, :]) ** 2).sum(-1)
        return torch.exp(-0.5 * d / 0.3**2) @ y


PROGRAMS = {
    "self_attention": (SelfAttention(), [(2, 1024, 64)]),
    "attention": (Attention(), [(2, 1024, 64), (2, 1024, 64), (2, 1024, 64)]),
    "knn": (Knn(), [(4096, 16), (256, 16)]),
    "gaussian_kernel": (GaussianKernel(), [(256, 8), (4096, 8), (4096, 2)]),
}


def export(name: str) -> str:
    module, shapes = PROGRAMS[name]
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(*s, generator=gen) for s in shapes]
    m = fx.export_and_import(module, *args, output_type="stablehlo")
    text = m.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    return text.replace(ROOT + os.sep, "")


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    for name in PROGRAMS:
        path = os.path.join(OUT, f"{name}.mlir")
        with open(path, "w") as f:
            f.write(f"// torch {torch.__version__}, torch-mlir "
                    f"{importlib.metadata.version('torch-mlir')}: written by "
                    "tools/torch_export/export_programs.py; do not edit.\n")
            f.write(export(name))
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

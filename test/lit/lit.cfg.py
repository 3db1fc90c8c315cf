# lit configuration for memfit's FileCheck tests.
#
# Substitutions (each also works without the Makefile's PATH):
#   memfit-opt   $MEMFIT_OPT, else memfit-opt on PATH (the Makefile puts
#                .venv/bin first), else .venv/bin or build/cmake
#   mlir-opt     Debian's stock mlir-opt-22 (loads the plugin)
#   FileCheck    FileCheck on PATH, else /usr/lib/llvm-22/bin, else FileCheck-22
#   not          likewise
#   %plugin      $MEMFIT_PLUGIN, else `memfit --plugin-path`, else
#                build/cmake/libMemfitPlugin.so
import os
import shutil
import subprocess

import lit.formats

config.name = "memfit"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

root = os.path.dirname(os.path.dirname(config.test_source_root))
llvm_bin = "/usr/lib/llvm-22/bin"
venv_bin = os.path.join(root, ".venv", "bin")
search_path = os.pathsep.join(
    [os.environ.get("PATH", ""), venv_bin, llvm_bin])


def find(names, fallbacks=()):
    for name in names:
        found = shutil.which(name, path=search_path)
        if found:
            return os.path.abspath(found)
    for path in fallbacks:
        if os.path.exists(path):
            return path
    lit_config.fatal(f"cannot find {names[0]} (looked on PATH, in {venv_bin}, "
                     f"{llvm_bin} and {list(fallbacks)})")


def find_plugin():
    if os.environ.get("MEMFIT_PLUGIN"):
        return os.environ["MEMFIT_PLUGIN"]
    cli = shutil.which("memfit", path=search_path)
    if cli:
        try:
            out = subprocess.run([cli, "--plugin-path"], capture_output=True,
                                 text=True, timeout=120).stdout.strip()
            if out and os.path.exists(out):
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    built = os.path.join(root, "build", "cmake", "libMemfitPlugin.so")
    if os.path.exists(built):
        return built
    lit_config.fatal("cannot find libMemfitPlugin.so (memfit --plugin-path)")


memfit_opt = os.environ.get("MEMFIT_OPT") or find(
    ["memfit-opt"], [os.path.join(root, "build", "cmake", "memfit-opt")])
mlir_opt = find(["mlir-opt-22"], [os.path.join(llvm_bin, "mlir-opt")])
filecheck = find(["FileCheck", "FileCheck-22"])
not_tool = find(["not", "not-22"], [os.path.join(llvm_bin, "not")])

# Tool names at command position only (not inside paths or words).
def tool(name):
    return r"(?<![\w/.%-])" + name.replace("-", r"\-") + r"(?=\s|$)"


config.substitutions.append(("%plugin", find_plugin()))
config.substitutions.append((tool("memfit-opt"), memfit_opt))
config.substitutions.append((tool("mlir-opt"), mlir_opt))
config.substitutions.append((tool("FileCheck"), filecheck))
config.substitutions.append((tool("not"), not_tool))

# Keep the environment small and deterministic.
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(memfit_opt), llvm_bin, os.environ.get("PATH", "")])

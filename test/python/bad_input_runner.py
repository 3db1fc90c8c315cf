"""Runs memfit over a batch of module texts, one line per case, for
test_bad_input.py (which runs it in a subprocess so that a crash is caught
and pinned to its case). Usage: bad_input_runner.py CASES.json START

Each case goes through memfit.transform (memfit-inline, memfit-profile and
the op-views test pass, so every view reads every op) and memfit's profile
API. Output lines: `CASE <i> OK`, `CASE <i> ERROR <first line of message>`
(a MemfitError), or `CASE <i> UNEXPECTED <type>: <message>`; then `DONE`.
"""
import json
import sys

import memfit
import testpasses
from memfit.api import profile_text

PIPELINE = ("memfit-inline,memfit-profile{output=/dev/null},"
            "memfit-test-op-views{output=/dev/null}")


def first_error(e: memfit.MemfitError) -> str:
    for d in e.diagnostics:
        if d.get("severity") == "error":
            return d.get("message", "").splitlines()[0] if d.get("message") else ""
    return str(e).splitlines()[0]


# Lets test_bad_input.py check that a dying runner is pinned to its case.
SELF_TEST_ABORT = "__memfit_bad_input_runner_abort__"


def run_case(text: str) -> str:
    if text == SELF_TEST_ABORT:
        import os
        os.abort()
    errors = []
    for step in (lambda: memfit.transform(text, PIPELINE),
                 lambda: profile_text(text)):
        try:
            step()
        except memfit.MemfitError as e:
            errors.append(first_error(e))
        except Exception as e:  # anything else is a bug to report
            return f"UNEXPECTED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return f"ERROR {errors[0]}" if errors else "OK"


def main():
    testpasses.load()
    cases = json.loads(open(sys.argv[1]).read())
    for i in range(int(sys.argv[2]), len(cases)):
        print(f"CASE {i} {run_case(cases[i])}".replace("\n", " "), flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()

"""Makes samples.py importable; the wavejit package is the installed wheel
(CI) or, with PYTHONPATH=runtime/python, the source tree after build_wheel.sh."""

import importlib
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def need(module: str, why: str):
    """Imports ``module``, skipping the test without it; under CI=1 (where .ci/run
    installs it) a missing module fails instead, as the project's oracle tests do."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=why)

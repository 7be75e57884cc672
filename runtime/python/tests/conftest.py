"""Makes samples.py importable; the wavejit package is the installed wheel
(CI) or, with PYTHONPATH=runtime/python, the source tree after build_wheel.sh."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

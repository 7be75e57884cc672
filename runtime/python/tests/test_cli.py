"""``python -m wavejit preload|lib``: absolute paths of the bundled libraries,
usable as LD_PRELOAD in one line."""

import os
import subprocess
import sys

import wavejit


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "wavejit", *args], capture_output=True, text=True, env=env, timeout=120)


def test_preload_prints_the_shim_path():
    out = run("preload")
    assert out.returncode == 0, out.stderr
    path = out.stdout.strip()
    assert out.stdout == path + "\n"
    assert os.path.isabs(path) and os.path.basename(path) == "libwavejit_kgsl.so"
    assert os.path.isfile(path) and path == wavejit.preload_path()


def test_lib_prints_the_c_api_path():
    out = run("lib")
    assert out.returncode == 0, out.stderr
    path = out.stdout.strip()
    assert os.path.basename(path) == "libwavejit.so" and os.path.isfile(path)
    assert path == wavejit.lib_path()


def test_the_preloaded_shim_serves_the_device_node():
    # The one-liner: LD_PRELOAD=$(python -m wavejit preload) python ...
    shim = run("preload").stdout.strip()
    probe = (
        "import os, stat; st = os.stat('/dev/kgsl-3d0'); fd = os.open('/dev/kgsl-3d0', os.O_RDWR);"
        "print(stat.S_ISCHR(st.st_mode), os.access('/dev/kgsl-3d0', os.R_OK | os.W_OK), fd >= 0); os.close(fd)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=dict(os.environ, LD_PRELOAD=shim), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"]


def test_usage_errors_exit_2():
    for args in ([], ["bogus"], ["preload", "extra"]):
        out = run(*args)
        assert out.returncode == 2 and "usage: python -m wavejit" in out.stderr and out.stdout == ""
    assert run("--help").returncode == 0

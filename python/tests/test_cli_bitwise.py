"""flexmb.run(..., output=...) writes the file `flexmb run -o` writes, bit
for bit (every dataset and attribute but the wall-clock timings), on every
shipped model; the Result's arrays are the file's."""

import os
import subprocess

import h5py
import numpy as np
import pytest

import flexmb
from conftest import CLI, MODELS
from compare_outputs import compare_h5, short_t_end

SHIPPED = sorted(os.path.splitext(f)[0] for f in os.listdir(MODELS) if f.endswith(".toml"))


@pytest.fixture(scope="module")
def cli():
    assert os.path.exists(CLI), f"build the command line first: cargo build --release ({CLI})"
    return CLI


@pytest.mark.parametrize("name", SHIPPED)
def test_run_equals_the_command_line(cli, name, tmp_path):
    path = os.path.join(MODELS, name + ".toml")
    t_end = short_t_end(name)
    cli_out, py_out = tmp_path / "cli.h5", tmp_path / "py.h5"
    p = subprocess.run([cli, "run", path, "-q", "-o", str(cli_out), "--t-end", repr(t_end)],
                       capture_output=True, text=True, timeout=300)
    try:
        r = flexmb.run(flexmb.load(path), t_end=t_end, output=py_out)
    except (flexmb.ConvergenceError, flexmb.SingularSystemError) as e:
        assert p.returncode != 0, f"Python failed, the CLI did not: {e}"
        r = e.result
    else:
        assert p.returncode == 0, p.stderr
    assert compare_h5(str(cli_out), str(py_out)) is None
    with h5py.File(cli_out, "r") as f:
        status = f.attrs["status"]
        assert (status.decode() if isinstance(status, bytes) else str(status)) == r.status
        for ours, theirs in (("time", "time"), ("u", "u"), ("v", "v"), ("a", "a"),
                             ("lam", "lambda")):
            if theirs in f:
                data = np.asarray(f[theirs][()], dtype=np.float64)
                assert getattr(r, ours).tobytes() == data.tobytes(), ours

"""Shared paths of the Python package's tests."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "models")
# The command line built by `cargo build --release` (CI builds it first).
CLI = os.environ.get("FLEXMB_CLI", os.path.join(ROOT, "target", "release", "flexmb"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def model_path(name):
    return os.path.join(MODELS, name + ".toml")


@pytest.fixture
def pendulum():
    import flexmb
    return flexmb.load(model_path("double_pendulum"))

"""flexmb: rigid and flexible multibody dynamics by the finite element method.

Models come from TOML model files (``flexmb.load``) or from code
(``flexmb.ModelBuilder``); runs give NumPy arrays (``flexmb.run`` ->
``Result``) or are stepped (``flexmb.Simulation``). The engine is Rust
(the ``flexmb`` crate); runs release the GIL and stop on Ctrl-C at the end
of a step. API: docs/python.md.
"""

from __future__ import annotations

import csv as _csv
import os as _os
import sys as _sys
import time as _time
from typing import Any, Callable, Dict, List, Optional

import numpy as _np

from . import _flexmb
from ._flexmb import (
    ConvergenceError,
    Error,
    Model,
    ModelError,
    OutputError,
    SingularSystemError,
    load,
    loads,
)

__version__ = _flexmb.__version__

__all__ = [
    "Error",
    "ModelError",
    "ConvergenceError",
    "SingularSystemError",
    "OutputError",
    "Model",
    "ModelBuilder",
    "Simulation",
    "Result",
    "load",
    "loads",
    "run",
    "read_hdf5",
    "static",
    "sweep",
]


class Result:
    """A run's histories: one row per recorded step.

    ``time``, ``step`` (1-D), ``u``, ``v``, ``a`` (rows x DOFs), ``lam``
    (rows x multipliers), ``energy`` (``kinetic``, ``potential``, ``total``,
    ``external_work``), ``constraints`` (``position``, ``velocity``,
    ``acceleration`` residual max-norms), ``probes`` (by name), ``stats``
    (the method's totals over the run), ``status`` (``completed``,
    ``failed`` or ``interrupted``) with ``reason``, ``dof_names``,
    ``multiplier_names``.
    """

    __slots__ = (
        "time", "step", "u", "v", "a", "lam", "energy", "constraints", "probes",
        "stats", "stats_per_row", "status", "reason", "dof_names", "multiplier_names",
        "integrator", "t_end_reached", "model_text", "newton_iterations",
        "newton_residual", "summary", "steps", "wall_seconds",
    )

    def __init__(self, fields: Dict[str, Any]):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    def dof(self, name: str) -> _np.ndarray:
        """The history of position coordinate ``name`` (e.g. ``"bob.x"``)."""
        return self.u[:, self._column(self.dof_names, name, "DOF")]

    def velocity(self, name: str) -> _np.ndarray:
        """The history of the velocity of coordinate ``name``."""
        return self.v[:, self._column(self.dof_names, name, "DOF")]

    def multiplier(self, name: str) -> _np.ndarray:
        """The history of multiplier ``name`` (e.g. ``"pin[0]"``)."""
        return self.lam[:, self._column(self.multiplier_names, name, "multiplier")]

    @staticmethod
    def _column(names: List[str], name: str, what: str) -> int:
        try:
            return names.index(name)
        except ValueError:
            raise ValueError(f"no {what} named {name!r}; the names are: {', '.join(names)}") from None

    def __len__(self) -> int:
        return len(self.time)

    def __repr__(self) -> str:
        return (f"<flexmb.Result {self.status}: {len(self.time)} rows to t = {self.t_end_reached}, "
                f"{len(self.dof_names)} DOFs, {len(self.multiplier_names)} multipliers>")


class _Bar:
    """A progress bar: tqdm's where it is installed, else a plain one on stderr."""

    def __init__(self, total: float, unit: str):
        self.total = total
        self.done = 0.0
        try:
            from tqdm.auto import tqdm  # type: ignore
            self.bar = tqdm(total=total, unit=unit, dynamic_ncols=True)
        except ImportError:
            self.bar = None
            self.started = _time.monotonic()

    def __call__(self, t: float, step: int) -> None:
        if self.bar is not None:
            self.bar.update(t - self.done)
            self.done = t
            return
        self.done = t
        frac = min(max(t / self.total, 0.0), 1.0) if self.total > 0 else 1.0
        width = 40
        filled = int(frac * width)
        elapsed = _time.monotonic() - self.started
        _sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {100 * frac:5.1f}%  "
                          f"t = {t:.6g}  step {step}  {elapsed:.1f} s")
        _sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            _sys.stderr.write("\n")
            _sys.stderr.flush()


def _as_model(model: Any) -> Model:
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, _os.PathLike)):
        return load(model)
    raise TypeError(f"model: expected a flexmb.Model or a model file's path, got {type(model).__name__}")


def run(model: Any, t_end: Optional[float] = None, output: Any = None, progress: Any = False,
        force: bool = False, record: bool = True, **settings: Any) -> Result:
    """Runs ``model`` from its initial state to ``t_end`` (default: the model's).

    ``settings`` are ``[integrator]`` keys of the model file (``method``,
    ``scheme``, ``dt``, ``rtol``, ...) on top of the model's table; the
    engine refuses a key the method does not take. With ``output`` the run
    is also written to that HDF5 file, the same file as ``flexmb run -o``.
    ``progress=True`` shows a progress bar (tqdm if installed); a callable
    is called as ``progress(t, step)`` every 20 ms or so. The GIL is
    released while the run steps; Ctrl-C stops it at the end of a step
    (the file closed as ``interrupted``) and raises ``KeyboardInterrupt``.
    ``record=False`` (without ``output``) keeps the energies, residuals,
    probes and statistics but not the states ``u``, ``v``, ``a``, ``lam``
    (empty arrays then), for large models.
    A step failure raises ``ConvergenceError`` or ``SingularSystemError``
    whose ``.result`` holds the run up to the failure.
    """
    model = _as_model(model)
    bar = None
    callback = None
    if progress is True:
        horizon = t_end if t_end is not None else _model_t_end(model)
        bar = _Bar(horizon, "s")
        callback = bar
    elif callable(progress):
        callback = progress
    elif progress not in (False, None):
        raise TypeError("progress: expected True, False or a callable(t, step)")
    try:
        fields = _flexmb.run(model, t_end, output, callback, force, record, **settings)
    except Error as e:
        if isinstance(getattr(e, "result", None), dict):
            e.result = Result(e.result)
        raise
    except KeyboardInterrupt as e:
        if isinstance(getattr(e, "result", None), dict):
            e.result = Result(e.result)
        raise
    finally:
        if bar is not None:
            bar.close()
    return Result(fields)


def _model_t_end(model: Model) -> float:
    t_end = model.t_end
    return 1.0 if t_end is None else t_end


def read_hdf5(path: Any) -> Result:
    """Reads a run file written by ``flexmb run -o`` or ``flexmb.run(output=...)``."""
    return Result(_flexmb.read_hdf5(path))


def static(model: Any, steps: int = 10, tol: float = 1e-10, max_iter: int = 30,
           time: float = 0.0) -> Dict[str, Any]:
    """Static equilibrium by ``steps`` load steps: a dict with ``u``, ``lam``,
    ``iterations`` (Newton iterations per load step), ``residual`` and ``dof_names``."""
    return _flexmb.static(_as_model(model), steps, tol, max_iter, time)


def sweep(sweep_file_or_dict: Any, out_dir: Any, jobs: Optional[int] = None,
          threads: Optional[int] = None, force: bool = False) -> Dict[str, Any]:
    """Runs a parameter sweep as ``flexmb batch`` does (docs/batch.md): one
    HDF5 file per case in ``out_dir``, and the summary table, returned as a
    dict of columns (NumPy float arrays for the numeric ones, lists of str
    for ``case``, the parameters given as text, ``status`` and
    ``failure_reason``). A dict stands for a sweep file's tables; its
    ``base`` is relative to the current folder. Ctrl-C starts no further
    case: the running ones finish, the summary lists the finished ones, and
    ``KeyboardInterrupt`` is raised."""
    path = _flexmb.sweep(sweep_file_or_dict, out_dir, jobs, threads, force)
    with open(path, newline="") as f:
        rows = list(_csv.reader(f))
    header, body = rows[0], rows[1:]
    columns: Dict[str, Any] = {}
    for k, name in enumerate(header):
        cells = [r[k] if k < len(r) else "" for r in body]
        try:
            columns[name] = _np.array([float(c) if c != "" else _np.nan for c in cells])
        except ValueError:
            columns[name] = cells
    return columns


class Simulation(_flexmb.Simulation):
    """A simulation in progress: ``Simulation(model, method=None, record=False, **settings)``.

    ``settings`` are the model file's ``[integrator]`` keys over the model's
    table (``method="dopri5", rtol=1e-8``; ``scheme="midpoint", dt=1e-3``).
    ``advance_to(t)``, ``step()``, then ``t``, ``u``, ``v``, ``a``, ``lam``,
    ``energy()``, ``constraint_residuals()``, ``position(name)``,
    ``probe(name)``, ``stats``; with ``record=True``, ``results()`` gives
    the histories since t = 0 as a ``Result``.
    """

    def advance_to(self, t: float, progress: Any = False) -> None:  # type: ignore[override]
        """Steps until the time is ``t`` (GIL released, Ctrl-C stops at the end of a step)."""
        if progress is True:
            bar = _Bar(t, "s")
            try:
                super().advance_to(t, bar)
            finally:
                bar.close()
        else:
            super().advance_to(t, progress if callable(progress) else None)

    def results(self) -> Optional[Result]:
        """The histories since t = 0 (``record=True``), else None."""
        fields = self._results()
        return None if fields is None else Result(fields)


class ModelBuilder:
    """A model in code, with the model file's tables and field names.

    ``node(id, position=..., mass=...)``, ``body(id, ...)``,
    ``element(id, type, ...)``, ``line(...)``, ``joint(id, type, ...)``,
    ``load(id, type, ...)``, ``probe(name, type, ...)``,
    ``generator(type, ...)``, ``gravity([...])``, ``integrator(...)``,
    ``output(...)``, then ``build()``. Shortcuts name the type:
    ``truss(id, ...)``, ``revolute(id, ...)``, ``point_force(id, ...)``, ...
    Points are a node or body id, ``{"body": id, "offset": [...]}`` or
    ``{"ground": [...]}``. Every entry is checked by the engine at
    ``build()``; errors are ``ModelError`` naming the entity and field.
    """

    ELEMENT_TYPES = ("axial_spring", "bending", "beam", "truss", "spring_damper",
                     "rotational_spring_damper")
    JOINT_TYPES = ("ground_pin", "revolute", "spherical", "universal", "cylindrical", "fixed",
                   "distance", "slope", "point_on_circle", "slider", "prismatic",
                   "rolling_disk", "path", "linear", "prescribed")
    LOAD_TYPES = ("point_force", "torque", "linear_field")
    PROBE_TYPES = ("coordinate", "displacement", "velocity", "distance", "deflection",
                   "multiplier", "energy", "constraint")

    def __init__(self, dimension: int = 2, title: Optional[str] = None):
        if dimension not in (2, 3):
            raise ValueError(f"dimension must be 2 or 3, got {dimension!r}")
        self._doc: Dict[str, Any] = {"schema": 1, "dimension": dimension}
        if title is not None:
            self._doc["title"] = str(title)

    @property
    def dimension(self) -> int:
        return self._doc["dimension"]

    def _add(self, table: str, entry: Dict[str, Any]) -> "ModelBuilder":
        self._doc.setdefault(table, []).append({k: v for k, v in entry.items() if v is not None})
        return self

    def gravity(self, g: Any) -> "ModelBuilder":
        """The gravitational acceleration vector (2 or 3 components)."""
        self._doc["gravity"] = g
        return self

    def node(self, id: str, **fields: Any) -> "ModelBuilder":
        """A point node: ``position``, ``velocity``, ``mass`` (``[[node]]``)."""
        return self._add("node", {"id": id, **fields})

    def body(self, id: str, **fields: Any) -> "ModelBuilder":
        """A rigid body, planar or 3-D (``[[body]]``)."""
        return self._add("body", {"id": id, **fields})

    def element(self, id: str, type: str, **fields: Any) -> "ModelBuilder":
        """An element of ``type`` (``[[element]]``)."""
        return self._add("element", {"id": id, "type": type, **fields})

    def line(self, **fields: Any) -> "ModelBuilder":
        """A line of beam elements: ``nodes``, ``element_ids``, ``from``, ``to``,
        ``elements``, ``section`` (``[[line]]``; ``from_=`` is taken for ``from``)."""
        if "from_" in fields:
            fields["from"] = fields.pop("from_")
        return self._add("line", fields)

    def joint(self, id: str, type: str, **fields: Any) -> "ModelBuilder":
        """A joint of ``type`` (``[[joint]]``)."""
        return self._add("joint", {"id": id, "type": type, **fields})

    def load(self, id: str, type: str, **fields: Any) -> "ModelBuilder":
        """A load of ``type`` (``[[load]]``)."""
        return self._add("load", {"id": id, "type": type, **fields})

    def probe(self, name: str, type: str, **fields: Any) -> "ModelBuilder":
        """A probe (a named scalar history) of ``type`` (``[[probe]]``)."""
        return self._add("probe", {"name": name, "type": type, **fields})

    def generator(self, type: str, **fields: Any) -> "ModelBuilder":
        """A generated model (``[generator]``), e.g. ``hanging_beam``."""
        self._doc["generator"] = {"type": type, **fields}
        return self

    def integrator(self, **settings: Any) -> "ModelBuilder":
        """The model's ``[integrator]`` table."""
        self._doc.setdefault("integrator", {}).update(settings)
        return self

    def output(self, **fields: Any) -> "ModelBuilder":
        """The model's ``[output]`` table."""
        self._doc.setdefault("output", {}).update(fields)
        return self

    def to_dict(self) -> Dict[str, Any]:
        """The model file's tables so far."""
        return self._doc

    def to_toml(self) -> str:
        """The model file text (as ``build()`` reads it)."""
        return _flexmb._to_toml(self._doc)

    def build(self) -> Model:
        """The model, checked by the engine."""
        return _flexmb._build(self._doc)


def _shortcut(table: str, kind: str) -> Callable[..., ModelBuilder]:
    def add(self: ModelBuilder, id: str, **fields: Any) -> ModelBuilder:
        return getattr(self, table)(id, kind, **fields)
    add.__name__ = kind
    add.__doc__ = f"A {kind.replace('_', ' ')} {table} (``{table}(id, {kind!r}, ...)``)."
    return add


for _table, _kinds in (("element", ModelBuilder.ELEMENT_TYPES), ("joint", ModelBuilder.JOINT_TYPES),
                       ("load", ModelBuilder.LOAD_TYPES)):
    for _kind in _kinds:
        # `distance` is both a joint and a probe type: the joint gets the shortcut.
        setattr(ModelBuilder, _kind, _shortcut(_table, _kind))
del _table, _kinds, _kind

"""The GIL is released during runs; Ctrl-C (SIGINT) stops a run at the end
of a step with KeyboardInterrupt and the output file closed as `interrupted`."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import flexmb
from conftest import model_path


def count_while(call):
    """How many times a Python thread counted while `call` ran."""
    counter = {"n": 0, "stop": False}

    def spin():
        while not counter["stop"]:
            counter["n"] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.05)
    before = counter["n"]
    t0 = time.perf_counter()
    call()
    elapsed = time.perf_counter() - t0
    during = counter["n"] - before
    counter["stop"] = True
    thread.join()
    return during, elapsed


def test_run_releases_the_gil():
    beam = flexmb.load(model_path("hanging_beam"), set={"generator.elements": 200})
    # 1500 steps of 200 elements: about 0.5 s on an idle 2-core machine.
    during, elapsed = count_while(lambda: flexmb.run(beam, t_end=1.5))
    assert elapsed > 0.2, elapsed
    # A thread blocked on the GIL would not count at all.
    assert during > 10_000, (during, elapsed)


def test_advance_to_releases_the_gil():
    beam = flexmb.load(model_path("hanging_beam"), set={"generator.elements": 200})
    sim = flexmb.Simulation(beam)
    during, elapsed = count_while(lambda: sim.advance_to(1.5))
    assert elapsed > 0.2 and during > 10_000, (during, elapsed)


def test_progress_callback_is_called(pendulum):
    calls = []
    # Every 20 ms or so, and once at the end.
    flexmb.run(pendulum, t_end=20.0, progress=lambda t, step: calls.append((t, step)))
    assert calls and all(0 < t <= 20.0 for t, _ in calls)
    assert calls[-1] == (20.0, 2000)
    flexmb.run(pendulum, t_end=0.05, progress=True)
    sim = flexmb.Simulation(pendulum)
    calls.clear()
    sim.advance_to(0.5, progress=lambda t, step: calls.append((t, step)))
    assert calls[-1] == (sim.t, 50)


# The run would take minutes (2e7 steps); "running" is printed from its
# first progress call, so the signal comes while it steps, however fast the
# machine.
CHILD = textwrap.dedent("""
    import sys, flexmb
    beam = flexmb.load(sys.argv[1], set={"output.every": 10000})
    def progress(t, step, said=[]):
        if not said:
            said.append(True)
            print("running", flush=True)
    print("ready", flush=True)
    try:
        flexmb.run(beam, t_end=20000.0, output=sys.argv[2], progress=progress)
    except KeyboardInterrupt as e:
        r = flexmb.read_hdf5(sys.argv[2])
        print("KeyboardInterrupt", r.status, len(r.time), r.t_end_reached, flush=True)
        sys.exit(0)
    print("finished", flush=True)
    sys.exit(3)
""")



def interrupt(p, after, timeout, what):
    """Sends SIGINT to child `p` `after` seconds from now; returns the words
    it printed once it exited 0 (fails if it did not stop within `timeout`)."""
    time.sleep(after)
    p.send_signal(signal.SIGINT)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError(f"the {what} did not stop on SIGINT")
    assert p.returncode == 0, (p.returncode, stdout, stderr)
    return stdout.split()

def test_sigint_stops_a_run(tmp_path):
    out = tmp_path / "long.h5"
    p = subprocess.Popen([sys.executable, "-c", CHILD, model_path("hanging_beam"), str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    assert p.stdout.readline().strip() == "running"
    words = interrupt(p, after=0.3, timeout=60, what="run")
    assert words[:2] == ["KeyboardInterrupt", "interrupted"], words
    assert int(words[2]) >= 1 and 0.0 < float(words[3]) < 20000.0, words


def test_simulation_busy_in_another_thread_is_an_error_not_a_deadlock():
    beam = flexmb.load(model_path("hanging_beam"), set={"generator.elements": 200})
    sim = flexmb.Simulation(beam)
    worker = threading.Thread(target=lambda: sim.advance_to(0.5))
    worker.start()
    time.sleep(0.1)
    seen = None
    try:
        sim.t
    except RuntimeError as e:
        seen = str(e)
    worker.join()
    assert seen is not None and "busy" in seen
    assert abs(sim.t - 0.5) < 1e-12


SWEEP_CHILD = textwrap.dedent("""
    import csv, os, sys, flexmb
    sweep = {"base": sys.argv[1], "set": {"integrator": {"t_end": 300.0}, "output": {"every": 10000}},
             "parameters": {"generator": {"elements": [100, 101, 102, 103, 104, 105, 106, 107]}}}
    print("ready", flush=True)
    try:
        flexmb.sweep(sweep, sys.argv[2], jobs=1)
    except KeyboardInterrupt:
        rows = list(csv.DictReader(open(os.path.join(sys.argv[2], "summary.csv"))))
        print("KeyboardInterrupt", len(rows), flush=True)
        sys.exit(0)
    print("finished", flush=True)
    sys.exit(3)
""")


def test_sigint_stops_a_sweep_after_the_running_case(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", SWEEP_CHILD, model_path("hanging_beam"),
                          str(tmp_path / "sweep")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    words = interrupt(p, after=2.0, timeout=120, what="sweep")
    # The running case finished; no further case started.
    assert words[0] == "KeyboardInterrupt" and 1 <= int(words[1]) < 8, words

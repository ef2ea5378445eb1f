#!/usr/bin/env bash
# The shipped sweep on a real (single-node) Slurm cluster, run by .ci/run
# (issue #25, docs/cluster.md). Needs root and Debian's packages.
#
# 1. A local `flexmb batch` of models/sweeps/slider_crank.toml: the reference.
# 2. scripts/cluster/slurm-single-node.sh start (its own folder, stopped at the
#    end by a trap, also when a check fails).
# 3. `flexmb batch --emit slurm --shards 4`, submitted with the emitted
#    submit.sh (array + merge, afterok): every array task and the merge
#    succeed, the merged summary has every case, each equal to the local run
#    bit for bit (scripts/cluster/compare_summaries.py; wall_seconds excluded).
# 4. The same again, one array task cancelled (scancel) while it runs: the
#    afterok merge never starts; `submit.sh I` resubmits only that task
#    (--resume keeps its completed cases) with a new merge; complete and equal.
# 5. A bad sweep (the shipped cases plus one with a typo'd dt whose output
#    would be 9e10 bytes), merge afterany: the task holding that case fails
#    with exactly the message of a local run of the same shard, the others
#    complete, the merge lists the failed task's cases as missing and exits 6,
#    and the completed cases are in the merged summary, equal to the local run.
#
# Environment: FLEXMB (the binary; default target/release/flexmb, built if
# missing), FLEXMB_SLURM_WORK (default target/slurm-ci), FLEXMB_SLURM_DIR
# (the cluster's folder, default /tmp/flexmb-slurm-ci).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
started=$SECONDS

flexmb=${FLEXMB:-$root/target/release/flexmb}
work=${FLEXMB_SLURM_WORK:-$root/target/slurm-ci}
cluster=${FLEXMB_SLURM_DIR:-/tmp/flexmb-slurm-ci}
sweep=$root/models/sweeps/slider_crank.toml
shards=4
node=$root/scripts/cluster/slurm-single-node.sh
compare=$root/scripts/cluster/compare_summaries.py

# Seconds since a time taken with $(now), two decimals.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
say() { echo "slurm-ci [$((SECONDS - started)) s]: $*"; }
fail() { echo "slurm-ci: FAILED: $*" >&2; exit 1; }

if [[ ! -x $flexmb ]]; then
    say "building $flexmb"
    cargo build --release
fi
rm -rf "$work"
mkdir -p "$work"

submitted=()
cleanup() {
    local rc=$?
    if ((${#submitted[@]})); then
        scancel "${submitted[@]}" 2>/dev/null || true
    fi
    bash "$node" stop --dir "$cluster" || true
    if ((rc != 0)); then
        echo "slurm-ci: exit $rc; cluster logs: $cluster/log, job files and logs: $work" >&2
    fi
}
trap cleanup EXIT

# 1. The local reference run.
t=$(now)
"$flexmb" batch "$sweep" --out "$work/local" --quiet
local_wall=$(since "$t")
say "local batch: $local_wall s"

# 2. The cluster.
eval "$(bash "$node" start --dir "$cluster")"
export SLURM_CONF
say "cluster up: $(sinfo --noheader --format='%P %a %D %T %c')"

# scontrol's field FIELD of job (or array task) ID, one line per record.
field() { scontrol -o show job "$1" 2>/dev/null | grep -o "\b$2=[^ ]*" | cut -d= -f2-; }

# Waits until every record of job ID has ended (at most LIMIT seconds).
wait_ended() {
    local id=$1 limit=$2 deadline=$((SECONDS + $2)) states
    while ((SECONDS < deadline)); do
        states=$(field "$id" JobState)
        if [[ -n $states ]] && ! grep -qE '^(PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|RESIZING)$' <<<"$states"; then
            return 0
        fi
        sleep 0.2
    done
    scontrol -o show job "$id" >&2 || true
    fail "job $id still running after $limit s"
}

# Emits the job files for SWEEP into OUT with extra options; prints the submit script.
emit() {
    local sweep=$1 out=$2
    shift 2
    "$flexmb" batch "$sweep" --emit slurm --shards "$shards" --cpus-per-task 1 --time 10 \
        --out "$out" "$@" >/dev/null
    echo "$out/slurm/submit.sh"
}

# Runs a submit script (with its arguments); sets $array and $merge.
submit() {
    local ids
    ids=$("$@")
    read -r array merge <<<"$ids"
    [[ $array =~ ^[0-9]+$ && $merge =~ ^[0-9]+$ ]] || fail "submit printed '$ids'"
    submitted+=("$array" "$merge")
}

expect_state() {
    local id=$1 want=$2 got
    got=$(field "$id" JobState | sort -u | paste -sd,)
    [[ $got == "$want" ]] || fail "job $id: state $got, expected $want"
}

# 3. The sweep as a job array of 4 tasks plus the merge.
out=$work/slurm
t=$(now)
submit "$(emit "$sweep" "$out")"
wait_ended "$merge" 120
array_wall=$(since "$t")
expect_state "$array" COMPLETED
expect_state "$merge" COMPLETED
say "array $array ($shards tasks) and merge $merge: submit to merged $array_wall s"
python3 "$compare" "$work/local/summary.csv" "$out/summary.csv" --cases 30

# 4. Again, one array task cancelled while it runs, once it has completed a
# case (its shard summary has a row), then only that task resubmitted.
task=$((shards - 1))
# Cases in the shard summary of task $task in folder $1 (0 if none yet).
rows() { local f=$1/summary-$task-of-$shards.csv; [[ -s $f ]] && echo $(($(wc -l <"$f") - 1)) || echo 0; }
cancel_one() {
    local out=$1 deadline
    rm -rf "$out"
    submit "$(emit "$sweep" "$out")"
    deadline=$((SECONDS + 60))
    until [[ $(field "${array}_$task" JobState) == RUNNING && $(rows "$out") -ge 1 ]]; do
        ((SECONDS < deadline)) || fail "task ${array}_$task did not complete a case in 60 s"
        sleep 0.05
    done
    scancel "${array}_$task"
    wait_ended "$array" 60
    [[ $(field "${array}_$task" JobState) == CANCELLED ]]
}
out=$work/slurm-cancel
for attempt in 1 2 3; do
    if cancel_one "$out"; then
        break
    fi
    # The task ended before scancel reached it.
    say "task $task of $array ended before the cancel (attempt $attempt)"
    scancel "$merge" 2>/dev/null || true
    ((attempt < 3)) || fail "could not cancel a running task in 3 attempts"
done
done_before=$(rows "$out")
say "cancelled task ${array}_$task while it ran, after $done_before of its 7 cases"
((done_before >= 1 && done_before < 7)) || fail "the cancelled task had completed $done_before cases"
grep -q CANCELLED "$(ls "$out"/slurm/logs/*-"${array}_$task".out)" || fail "no CANCELLED in the task's log"
for t in $(seq 0 $((shards - 2))); do expect_state "${array}_$t" COMPLETED; done
# afterok: the merge waits for a dependency that can no longer be met (the
# scheduler marks it so at its next pass over the queue).
deadline=$((SECONDS + 30))
until [[ $(field "$merge" JobState) == PENDING && $(field "$merge" Reason) == DependencyNeverSatisfied ]]; do
    ((SECONDS < deadline)) ||
        fail "merge $merge: $(field "$merge" JobState) $(field "$merge" Reason), expected PENDING DependencyNeverSatisfied"
    sleep 0.2
done
scancel "$merge"
submit "$out/slurm/submit.sh" "$task"
wait_ended "$merge" 120
expect_state "$array" COMPLETED
expect_state "$merge" COMPLETED
log=$(ls "$out"/slurm/logs/*-"${array}_$task".out)
grep -q "^7 cases: 7 completed ($done_before of them skipped by --resume), 0 failed" "$log" ||
    fail "$log: not $done_before cases skipped by --resume: $(head -1 "$log")"
say "resubmitted task $task as $array ($(head -1 "$log")), merge $merge"
python3 "$compare" "$work/local/summary.csv" "$out/summary.csv" --cases 30
[[ $(find "$out" -name '*.h5' ! -name 'summary*' | wc -l) -eq 30 ]] || fail "not 30 case files in $out"

# 5. A bad sweep: the shipped cases plus one with a typo'd time step.
bad=$work/bad.toml
python3 - "$sweep" "$bad" <<'PY'
import itertools, json, sys, tomllib
src, dst = sys.argv[1], sys.argv[2]
s = tomllib.load(open(src, "rb"))
import os
base = os.path.normpath(os.path.join(os.path.dirname(src), s["base"]))
val = lambda v: json.dumps(v)
lines = [f"base = {val(base)}", "[set]"]
def flat(prefix, t):
    for k, v in t.items():
        if isinstance(v, dict):
            yield from flat(prefix + k + ".", v)
        else:
            yield prefix + k, v
lines += [f"{k} = {val(v)}" for k, v in flat("", s["set"])]
params = list(flat("", s["parameters"]))
for combo in itertools.product(*[v for _, v in params]):
    lines += ["", "[[case]]"] + [f"{k} = {val(v)}" for (k, _), v in zip(params, combo)]
# Case 30 (shard 30 mod 4 = 2): dt 1e-10 instead of 1e-5, 7e8 steps.
lines += ["", "[[case]]", 'generator.elements = 8', 'generator.omega0 = 120.0',
          'integrator.scheme = "midpoint"', "integrator.dt = 1e-10", ""]
open(dst, "w").write("\n".join(lines))
PY
bad_task=$((30 % shards))
set +e
"$flexmb" batch "$bad" --shard "$bad_task/$shards" --resume --jobs 1 --out "$work/bad-local" --quiet \
    >"$work/bad-local.out" 2>"$work/bad-local.err"
rc=$?
set -e
((rc == 2)) || fail "local run of the bad shard: exit $rc, expected 2"
[[ ! -s $work/bad-local.out ]] || fail "local run of the bad shard wrote to stdout"
out=$work/slurm-bad
submit "$(emit "$bad" "$out" --merge-after any)"
wait_ended "$merge" 120
for t in $(seq 0 $((shards - 1))); do
    if ((t == bad_task)); then
        expect_state "${array}_$t" FAILED
        [[ $(field "${array}_$t" ExitCode) == 2:0 ]] || fail "task $t exit $(field "${array}_$t" ExitCode)"
    else
        expect_state "${array}_$t" COMPLETED
    fi
done
log=$(ls "$out"/slurm/logs/*-"${array}_$bad_task".out)
cmp "$log" "$work/bad-local.err" || fail "$log differs from the local run's stderr"
say "bad sweep: task $bad_task failed with the local run's message: $(cut -c1-110 "$log")..."
expect_state "$merge" FAILED
[[ $(field "$merge" ExitCode) == 6:0 ]] || fail "merge exit $(field "$merge" ExitCode), expected 6"
mlog=$(ls "$out"/slurm/logs/*-merge-"$merge".out)
missing=$(python3 - "$bad" "$bad_task" "$shards" "$work/local/summary.csv" <<'PY'
import csv, sys
# The ids of the cases k with k mod N = I: those of the local run in sweep
# order (the first 30) and the bad case (k = 30, in no local run).
_, bad, task, n, local = sys.argv
ids = [r["case"] for r in csv.DictReader(open(local))]
print(" ".join(c for k, c in enumerate(ids) if k % int(n) == int(task)))
PY
)
n_missing=$(wc -w <<<"$missing")
for id in $missing; do grep -qxF "missing case: $id" "$mlog" || fail "$mlog does not list $id"; done
[[ $(grep -c '^missing case: ' "$mlog") -eq $((n_missing + 1)) ]] || fail "$mlog: not $((n_missing + 1)) missing cases"
grep -q "^$((31 - n_missing - 1)) of 31 cases from $shards shards" "$mlog" || fail "$mlog: $(tail -1 "$mlog")"
say "bad sweep: merge $merge exit 6, $(grep -c '^missing case: ' "$mlog") missing cases listed"
# shellcheck disable=SC2086
python3 "$compare" "$work/local/summary.csv" "$out/summary.csv" --cases $((30 - n_missing)) --missing $missing

say "all checks passed; local batch $local_wall s, Slurm array (submit to merged) \
$array_wall s, total $((SECONDS - started)) s"

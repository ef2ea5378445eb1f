//! `flexmb batch --emit slurm|k8s`: job scripts that run one sweep as the
//! tasks of a cluster job array (shard `I/N` per task, `--resume`) and merge
//! the shard summaries afterwards (`docs/cluster.md`).
//!
//! Slurm: `array.sbatch` (a job array `--array=0-(N-1)`), `merge.sbatch`
//! (`flexmb batch-merge`) and `submit.sh`, which submits the array with
//! `sbatch --parsable` and the merge with `--dependency=afterok:<array id>`
//! (or `afterany`). Kubernetes: an indexed Job (`completionMode: Indexed`,
//! the shard from `JOB_COMPLETION_INDEX`) and the merge as a second Job.
//! Every path in the emitted files is absolute, so they can be submitted
//! from any folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::case::BatchError;

/// Which scheduler the files are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmitTarget {
    /// A Slurm job array and a dependent merge job.
    Slurm,
    /// A Kubernetes indexed Job and a merge Job.
    K8s,
}

impl FromStr for EmitTarget {
    type Err = String;

    fn from_str(s: &str) -> Result<EmitTarget, String> {
        match s {
            "slurm" => Ok(EmitTarget::Slurm),
            "k8s" | "kubernetes" => Ok(EmitTarget::K8s),
            _ => Err(format!("--emit '{s}': expected slurm or k8s")),
        }
    }
}

/// When the Slurm merge job may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeAfter {
    /// `afterok`: only once every array task succeeded; after a failed or
    /// cancelled task the merge stays pending (`DependencyNeverSatisfied`)
    /// until the missing tasks are resubmitted with a new merge.
    Ok,
    /// `afterany`: once every array task ended, however; the merge then
    /// lists the missing cases and exits 6.
    Any,
}

impl MergeAfter {
    /// The `sbatch --dependency` type.
    pub fn dependency(self) -> &'static str {
        match self {
            MergeAfter::Ok => "afterok",
            MergeAfter::Any => "afterany",
        }
    }
}

impl FromStr for MergeAfter {
    type Err = String;

    fn from_str(s: &str) -> Result<MergeAfter, String> {
        match s {
            "ok" | "afterok" => Ok(MergeAfter::Ok),
            "any" | "afterany" => Ok(MergeAfter::Any),
            _ => Err(format!("--merge-after '{s}': expected ok or any")),
        }
    }
}

/// A task's time limit in Slurm's formats: `M`, `M:S`, `H:M:S`, `D-H`,
/// `D-H:M`, `D-H:M:S` (sbatch(1), `--time`); minutes and seconds below 60
/// where a larger unit is given, hours below 24 after a day count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WallTime {
    /// The limit in seconds, > 0.
    pub seconds: u64,
}

impl WallTime {
    /// `[D-]HH:MM:SS`, the form written into the scripts.
    pub fn slurm(&self) -> String {
        let (d, rest) = (self.seconds / 86400, self.seconds % 86400);
        let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
        if d > 0 {
            format!("{d}-{h:02}:{m:02}:{s:02}")
        } else {
            format!("{h:02}:{m:02}:{s:02}")
        }
    }
}

impl FromStr for WallTime {
    type Err = String;

    fn from_str(text: &str) -> Result<WallTime, String> {
        let bad = |why: &str| {
            format!(
                "--time '{text}': {why}; expected minutes M, M:S, H:M:S, D-H, D-H:M or D-H:M:S \
                 (Slurm's --time formats), e.g. 30, 01:30:00 or 2-00:00:00"
            )
        };
        let number = |s: &str| -> Result<u64, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!("'{s}' is not a whole number")));
            }
            s.parse::<u64>().map_err(|_| bad("number too large"))
        };
        let below = |v: u64, limit: u64, what: &str| {
            if v < limit {
                Ok(v)
            } else {
                Err(bad(&format!("{what} {v} is not below {limit}")))
            }
        };
        let (days, clock) = match text.trim().split_once('-') {
            Some((d, c)) => (Some(number(d)?), c),
            None => (None, text.trim()),
        };
        let parts: Vec<&str> = clock.split(':').collect();
        let seconds = match (days, parts.as_slice()) {
            (None, [m]) => number(m)? * 60,
            (None, [m, s]) => number(m)? * 60 + below(number(s)?, 60, "seconds")?,
            (None, [h, m, s]) => {
                number(h)? * 3600
                    + below(number(m)?, 60, "minutes")? * 60
                    + below(number(s)?, 60, "seconds")?
            }
            (Some(d), [h]) => d * 86400 + below(number(h)?, 24, "hours")? * 3600,
            (Some(d), [h, m]) => {
                d * 86400
                    + below(number(h)?, 24, "hours")? * 3600
                    + below(number(m)?, 60, "minutes")? * 60
            }
            (Some(d), [h, m, s]) => {
                d * 86400
                    + below(number(h)?, 24, "hours")? * 3600
                    + below(number(m)?, 60, "minutes")? * 60
                    + below(number(s)?, 60, "seconds")?
            }
            _ => return Err(bad("too many fields")),
        };
        if seconds == 0 {
            return Err(bad("the limit must be positive"));
        }
        Ok(WallTime { seconds })
    }
}

/// What to emit: the sweep, where its results go, and the job's shape.
#[derive(Debug, Clone)]
pub struct EmitSpec {
    /// Scheduler.
    pub target: EmitTarget,
    /// The flexmb binary the tasks run (absolute).
    pub flexmb: PathBuf,
    /// The sweep file (absolute).
    pub sweep: PathBuf,
    /// The sweep's output folder (absolute); the job files go to its
    /// `slurm/` or `k8s/` subfolder.
    pub out: PathBuf,
    /// Cases in the sweep (for the checks of `shards`).
    pub cases: usize,
    /// Array tasks N: task I runs `--shard I/N`; `2..=cases`.
    pub shards: usize,
    /// Cores per task, also the task's `--jobs`; >= 1.
    pub cpus_per_task: usize,
    /// Time limit of each task (and of the merge).
    pub time: WallTime,
    /// Slurm: when the merge may start.
    pub merge_after: MergeAfter,
    /// Kubernetes: the container image holding the flexmb binary at
    /// `flexmb` and the sweep and its base model at their paths.
    pub image: String,
    /// Kubernetes: the `ReadWriteMany` volume claim mounted at `out`.
    pub claim: String,
}

/// One emitted file.
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Written with mode 0755 (a script run directly).
    pub executable: bool,
}

/// The default array size: one task per case, at most 1000 (Slurm's default
/// `MaxArraySize` of 1001 allows indices up to 1000).
pub fn default_shards(cases: usize) -> usize {
    cases.clamp(2, 1000)
}

impl EmitSpec {
    /// Checks the options against each other and the sweep (clear messages
    /// naming the option).
    pub fn check(&self) -> Result<(), String> {
        if self.shards < 2 {
            return Err(format!(
                "--shards {}: a job array needs at least 2 tasks (one task is `flexmb batch` in one job)",
                self.shards
            ));
        }
        if self.shards > self.cases {
            return Err(format!(
                "--shards {}: the sweep has {} cases, so at most {} tasks have a case to run",
                self.shards, self.cases, self.cases
            ));
        }
        if self.cpus_per_task == 0 {
            return Err("--cpus-per-task 0: a task needs at least 1 core".into());
        }
        for (what, p) in [
            ("flexmb", &self.flexmb),
            ("sweep", &self.sweep),
            ("out", &self.out),
        ] {
            if !p.is_absolute() {
                return Err(format!("{what} path {} is not absolute", p.display()));
            }
            if p.to_str().is_none() {
                return Err(format!("{what} path {} is not valid UTF-8", p.display()));
            }
        }
        Ok(())
    }

    /// The job name: `flexmb-<sweep file stem>`, letters, digits and `-`
    /// only, lower case, at most 52 characters (a Kubernetes Job name that
    /// leaves room for the `-merge` suffix and the pods' suffixes).
    pub fn job_name(&self) -> String {
        let stem = self
            .sweep
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_ascii_lowercase();
        let mut name = String::from("flexmb");
        for part in stem.split(|c: char| !c.is_ascii_alphanumeric()) {
            if !part.is_empty() {
                name.push('-');
                name.push_str(part);
            }
        }
        name.truncate(52);
        name.trim_end_matches('-').to_string()
    }

    /// The files to write, by target (after [`EmitSpec::check`]).
    pub fn files(&self) -> Result<Vec<EmittedFile>, String> {
        self.check()?;
        Ok(match self.target {
            EmitTarget::Slurm => self.slurm(),
            EmitTarget::K8s => self.k8s(),
        })
    }

    /// The folder of the job files: `<out>/slurm` or `<out>/k8s`.
    pub fn dir(&self) -> PathBuf {
        self.out.join(match self.target {
            EmitTarget::Slurm => "slurm",
            EmitTarget::K8s => "k8s",
        })
    }

    fn path_str(p: &Path) -> &str {
        p.to_str().unwrap_or_default()
    }

    fn slurm(&self) -> Vec<EmittedFile> {
        let dir = self.dir();
        let logs = dir.join("logs");
        let name = self.job_name();
        let n = self.shards;
        let (exe, sweep, out) = (
            sh(Self::path_str(&self.flexmb)),
            sh(Self::path_str(&self.sweep)),
            sh(Self::path_str(&self.out)),
        );
        let time = self.time.slurm();
        let mut array = String::new();
        let _ = write!(
            array,
            "#!/bin/bash\n\
             # Written by `flexmb batch --emit slurm` (docs/cluster.md): task I of this job\n\
             # array runs shard I/{n} of the sweep, skipping cases already completed\n\
             # (--resume), into the shared output folder.\n\
             #SBATCH --job-name={name}\n\
             #SBATCH --array=0-{last}\n\
             #SBATCH --cpus-per-task={cpus}\n\
             #SBATCH --time={time}\n\
             #SBATCH --output={log}\n\
             set -euo pipefail\n\
             exec {exe} batch {sweep} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" --resume \\\n    \
             --jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" --threads 1 --out {out} --quiet\n",
            last = n - 1,
            cpus = self.cpus_per_task,
            log = Self::path_str(&logs.join(format!("{name}-%A_%a.out"))),
        );
        let mut merge = String::new();
        let _ = write!(
            merge,
            "#!/bin/bash\n\
             # Written by `flexmb batch --emit slurm` (docs/cluster.md): the shard summaries\n\
             # merged into summary.csv and summary.h5; exit 6 lists the missing cases.\n\
             #SBATCH --job-name={name}-merge\n\
             #SBATCH --cpus-per-task=1\n\
             #SBATCH --time={time}\n\
             #SBATCH --output={log}\n\
             set -euo pipefail\n\
             exec {exe} batch-merge {sweep} --out {out} --shards {n}\n",
            log = Self::path_str(&logs.join(format!("{name}-merge-%j.out"))),
        );
        let dep = self.merge_after.dependency();
        let mut submit = String::new();
        let _ = write!(
            submit,
            "#!/bin/bash\n\
             # Written by `flexmb batch --emit slurm` (docs/cluster.md). Submits the job\n\
             # array (every task, or only those given, e.g. `submit.sh 2,5` to rerun\n\
             # tasks 2 and 5) and the merge job, which starts after the array ({dep}).\n\
             # Prints the two job ids: ARRAY MERGE.\n\
             set -euo pipefail\n\
             mkdir -p {logs}\n\
             array=$(sbatch --parsable ${{1:+--array=\"$1\"}} {array_path})\n\
             array=${{array%%;*}}\n\
             merge=$(sbatch --parsable --dependency={dep}:\"$array\" {merge_path})\n\
             merge=${{merge%%;*}}\n\
             echo \"$array $merge\"\n",
            logs = sh(Self::path_str(&logs)),
            array_path = sh(Self::path_str(&dir.join("array.sbatch"))),
            merge_path = sh(Self::path_str(&dir.join("merge.sbatch"))),
        );
        vec![
            EmittedFile {
                path: dir.join("array.sbatch"),
                text: array,
                executable: false,
            },
            EmittedFile {
                path: dir.join("merge.sbatch"),
                text: merge,
                executable: false,
            },
            EmittedFile {
                path: dir.join("submit.sh"),
                text: submit,
                executable: true,
            },
        ]
    }

    fn k8s(&self) -> Vec<EmittedFile> {
        let dir = self.dir();
        let name = self.job_name();
        let n = self.shards;
        let cpus = self.cpus_per_task;
        let (exe, sweep, out) = (
            Self::path_str(&self.flexmb),
            Self::path_str(&self.sweep),
            Self::path_str(&self.out),
        );
        let shard_cmd = format!(
            "exec {} batch {} --shard \"${{JOB_COMPLETION_INDEX}}/{n}\" --resume --jobs {cpus} --threads 1 --out {} --quiet",
            sh(exe),
            sh(sweep),
            sh(out)
        );
        let volumes = format!(
            "          volumeMounts:\n            - name: results\n              mountPath: {}\n      \
             volumes:\n        - name: results\n          persistentVolumeClaim:\n            claimName: {}\n",
            yaml(out),
            yaml(&self.claim)
        );
        let shards = format!(
            "# Written by `flexmb batch --emit k8s` (docs/cluster.md): pod I of this\n\
             # indexed Job runs shard I/{n} of the sweep (--resume) into the volume\n\
             # mounted at the output folder. Then: kubectl apply -f merge.yaml\n\
             apiVersion: batch/v1\n\
             kind: Job\n\
             metadata:\n  name: {name}\n\
             spec:\n  completions: {n}\n  parallelism: {n}\n  completionMode: Indexed\n  \
             backoffLimitPerIndex: 2\n  \
             template:\n    spec:\n      restartPolicy: Never\n      activeDeadlineSeconds: {secs}\n      \
             containers:\n        - name: shard\n          image: {image}\n          \
             command: [\"sh\", \"-c\", {cmd}]\n          \
             resources:\n            requests:\n              cpu: \"{cpus}\"\n            limits:\n              cpu: \"{cpus}\"\n\
             {volumes}",
            secs = self.time.seconds,
            image = yaml(&self.image),
            cmd = yaml(&shard_cmd),
        );
        let merge = format!(
            "# Written by `flexmb batch --emit k8s` (docs/cluster.md): the shard summaries\n\
             # merged into summary.csv and summary.h5 (exit 6 lists missing cases); apply\n\
             # once the Job {name} has finished.\n\
             apiVersion: batch/v1\n\
             kind: Job\n\
             metadata:\n  name: {name}-merge\n\
             spec:\n  backoffLimit: 0\n  \
             template:\n    spec:\n      restartPolicy: Never\n      activeDeadlineSeconds: {secs}\n      \
             containers:\n        - name: merge\n          image: {image}\n          \
             command: [{exe}, \"batch-merge\", {sweep}, \"--out\", {out}, \"--shards\", \"{n}\"]\n\
             {volumes}",
            secs = self.time.seconds,
            image = yaml(&self.image),
            exe = yaml(exe),
            sweep = yaml(sweep),
            out = yaml(out),
        );
        vec![
            EmittedFile {
                path: dir.join("shards.yaml"),
                text: shards,
                executable: false,
            },
            EmittedFile {
                path: dir.join("merge.yaml"),
                text: merge,
                executable: false,
            },
        ]
    }
}

/// Writes the files (creating their folder), scripts with mode 0755.
pub fn write_emitted(files: &[EmittedFile]) -> Result<(), BatchError> {
    for f in files {
        let io = |source| BatchError::Io {
            path: f.path.clone(),
            source,
        };
        if let Some(parent) = f.path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&f.path, &f.text).map_err(io)?;
        #[cfg(unix)]
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&f.path, std::fs::Permissions::from_mode(0o755))
                .map_err(io)?;
        }
    }
    Ok(())
}

/// `s` as one POSIX shell word: single-quoted, a `'` written as `'\''`.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` as a YAML double-quoted scalar (YAML 1.2 §7.3.1; JSON's escapes).
fn yaml(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\x{:02x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(target: EmitTarget) -> EmitSpec {
        EmitSpec {
            target,
            flexmb: PathBuf::from("/opt/flexmb/bin/flexmb"),
            sweep: PathBuf::from("/home/u/models/sweeps/slider_crank.toml"),
            out: PathBuf::from("/shared/it's here"),
            cases: 30,
            shards: 6,
            cpus_per_task: 4,
            time: "1-02:03:04".parse().unwrap(),
            merge_after: MergeAfter::Ok,
            image: "flexmb:latest".into(),
            claim: "sweep-results".into(),
        }
    }

    #[test]
    fn wall_time_formats() {
        let t = |s: &str| s.parse::<WallTime>().map(|t| t.seconds);
        assert_eq!(t("30"), Ok(1800));
        assert_eq!(t("30:15"), Ok(1815));
        assert_eq!(t("01:30:00"), Ok(5400));
        assert_eq!(t("48:00:00"), Ok(172_800));
        assert_eq!(t("2-0"), Ok(172_800));
        assert_eq!(t("1-02:03"), Ok(93_780));
        assert_eq!(t("1-02:03:04"), Ok(93_784));
        for bad in [
            "", "0", "00:00:00", "1:60", "1:2:3:4", "1h", "-5", "1-24", "1:-2", "1.5",
        ] {
            let e = t(bad).unwrap_err();
            assert!(e.starts_with(&format!("--time '{bad}': ")), "{e}");
            assert!(e.contains("D-H:M:S"), "{e}");
        }
        assert!(t("1:60")
            .unwrap_err()
            .contains("seconds 60 is not below 60"));
        let w = |s: &str| s.parse::<WallTime>().unwrap().slurm();
        assert_eq!(w("90"), "01:30:00");
        assert_eq!(w("1-02:03:04"), "1-02:03:04");
        assert_eq!(w("48:00:00"), "2-00:00:00");
    }

    #[test]
    fn options_are_checked() {
        let with = |f: &dyn Fn(&mut EmitSpec)| {
            let mut s = spec(EmitTarget::Slurm);
            f(&mut s);
            s.files().map(|_| ()).unwrap_err()
        };
        assert!(with(&|s| s.shards = 0).contains("--shards 0: a job array needs at least 2 tasks"));
        assert!(with(&|s| s.shards = 31).contains("--shards 31: the sweep has 30 cases"));
        assert!(with(&|s| s.cpus_per_task = 0).contains("--cpus-per-task 0"));
        assert!(with(&|s| s.out = PathBuf::from("rel")).contains("out path rel is not absolute"));
        assert!(spec(EmitTarget::Slurm).files().is_ok());
        assert_eq!(default_shards(30), 30);
        assert_eq!(default_shards(1), 2);
        assert_eq!(default_shards(5000), 1000);
        assert_eq!("k8s".parse(), Ok(EmitTarget::K8s));
        assert!("pbs"
            .parse::<EmitTarget>()
            .unwrap_err()
            .contains("expected slurm or k8s"));
        assert!("maybe"
            .parse::<MergeAfter>()
            .unwrap_err()
            .contains("expected ok or any"));
    }

    #[test]
    fn slurm_scripts() {
        let files = spec(EmitTarget::Slurm).files().unwrap();
        let names: Vec<_> = files.iter().map(|f| f.path.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "/shared/it's here/slurm/array.sbatch",
                "/shared/it's here/slurm/merge.sbatch",
                "/shared/it's here/slurm/submit.sh"
            ]
        );
        let array = &files[0].text;
        for line in [
            "#SBATCH --job-name=flexmb-slider-crank\n",
            "#SBATCH --array=0-5\n",
            "#SBATCH --cpus-per-task=4\n",
            "#SBATCH --time=1-02:03:04\n",
            "#SBATCH --output=/shared/it's here/slurm/logs/flexmb-slider-crank-%A_%a.out\n",
            "exec '/opt/flexmb/bin/flexmb' batch '/home/u/models/sweeps/slider_crank.toml' \
             --shard \"${SLURM_ARRAY_TASK_ID}/6\" --resume \\\n    \
             --jobs \"${SLURM_CPUS_PER_TASK:-4}\" --threads 1 --out '/shared/it'\\''s here' --quiet\n",
        ] {
            assert!(array.contains(line), "missing {line:?} in\n{array}");
        }
        assert!(array.starts_with("#!/bin/bash\n"));
        let merge = &files[1].text;
        assert!(merge.contains(
            "exec '/opt/flexmb/bin/flexmb' batch-merge '/home/u/models/sweeps/slider_crank.toml' \
             --out '/shared/it'\\''s here' --shards 6\n"
        ));
        assert!(merge.contains("#SBATCH --job-name=flexmb-slider-crank-merge\n"));
        let submit = &files[2].text;
        assert!(files[2].executable && !files[0].executable);
        assert!(submit.contains(
            "array=$(sbatch --parsable ${1:+--array=\"$1\"} '/shared/it'\\''s here/slurm/array.sbatch')\n"
        ));
        assert!(submit.contains(
            "merge=$(sbatch --parsable --dependency=afterok:\"$array\" '/shared/it'\\''s here/slurm/merge.sbatch')\n"
        ));
        let mut any = spec(EmitTarget::Slurm);
        any.merge_after = MergeAfter::Any;
        assert!(any.files().unwrap()[2]
            .text
            .contains("--dependency=afterany:\"$array\""));
    }

    #[test]
    fn quoting() {
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(yaml(r#"say "hi" \ now"#), r#""say \"hi\" \\ now""#);
        assert_eq!(yaml("a\nb\u{1}"), r#""a\nb\x01""#);
    }
}

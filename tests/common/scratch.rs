//! Scratch files and folders of the tests, and the text a finished command
//! (the `flexmb` binary) printed.

use std::path::{Path, PathBuf};
use std::process::Output;

/// Path `name` in folder `folder` of Cargo's scratch directory for
/// integration tests (created), with the file of an earlier run removed.
pub fn scratch_file(folder: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    p
}

/// Writes `body` to [`scratch_file`] `folder/name` and returns its path.
pub fn write_scratch(folder: &str, name: &str, body: &str) -> PathBuf {
    let p = scratch_file(folder, name);
    std::fs::write(&p, body).unwrap();
    p
}

/// The folder `flexmb-<name>-<process id>` in the system's temporary
/// directory (created).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flexmb-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A finished command's stdout followed by its stderr.
pub fn output_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts a finished command succeeded, showing what it printed if not.
pub fn assert_success(o: &Output) {
    assert!(o.status.success(), "{}", output_text(o));
}

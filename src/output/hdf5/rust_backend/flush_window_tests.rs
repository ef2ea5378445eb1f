//! The file a reader finds at every moment of a flush
//! ([`RustBackend::flush`]): flushed or not, every index entry it can reach
//! lies below the end of allocation its superblock names.

use super::*;
use crate::output::{
    ConstraintNorms, Energy, NewtonStats, Recorder, RunInfo, RunStatus, StepRecord,
};

fn run_info() -> RunInfo {
    RunInfo {
        integrator: "test".into(),
        dof_names: (0..5).map(|i| format!("q{i}")).collect(),
        multiplier_names: vec!["l0".into(), "l1".into()],
        ..RunInfo::default()
    }
}

/// The superblock on disk.
fn superblock(path: &Path) -> [u8; 48] {
    let mut buf = [0u8; 48];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut buf))
        .expect("read superblock");
    buf
}

/// `(end of allocation, consistency flags)` of a superblock.
fn decode(buf: &[u8; 48]) -> (u64, u8) {
    let sb = SuperblockV2V3::decode(buf).expect("version-3 superblock");
    (sb.end_of_file_address, sb.file_consistency_flags)
}

/// The file as it was when the writer died inside an SWMR flush, just
/// before the flush rewrote the superblock: the file now under the
/// superblock `before` the flush.
fn killed_before_superblock(path: &Path, before: &[u8; 48], name: &str) -> PathBuf {
    let copy = path.with_extension(name);
    std::fs::copy(path, &copy).expect("copy");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&copy)
        .and_then(|mut f| f.write_all(before))
        .expect("write superblock");
    copy
}

/// Reads the streamed datasets of `path` with `rows` rows. Through libhdf5,
/// which refuses a chunk past the end of allocation ("addr overflow"), when
/// the C library is there; through rust-hdf5, which does not check,
/// otherwise.
fn read_rows(path: &Path, what: &str) -> Vec<usize> {
    ["time", "u", "v", "a", "lambda"]
        .iter()
        .map(|ds| {
            #[cfg(feature = "hdf5-c")]
            let x = hdf5::File::open(path)
                .and_then(|f| f.dataset(ds))
                .and_then(|d| d.read_raw::<f64>())
                .map_err(|e| e.to_string());
            #[cfg(not(feature = "hdf5-c"))]
            let x = rust_hdf5::H5File::open(path)
                .and_then(|f| f.dataset(ds))
                .and_then(|d| d.read_raw::<f64>())
                .map_err(|e| e.to_string());
            let x = x.unwrap_or_else(|e| panic!("{what}, /{ds}: {e}"));
            let width = match *ds {
                "time" => 1,
                "lambda" => 2,
                _ => 5,
            };
            x.len() / width
        })
        .collect()
}

/// Kills inside both SWMR flushes of [`RustBackend::flush`], just before
/// each rewrites the superblock (the last moment of the flush whose file
/// has the flush's headers under the superblock before it), leave files
/// that libhdf5 reads: the first flush's with the rows of the flush before,
/// the second's with the new rows. With a single flush, the second state
/// had the new rows' chunks past the old end of allocation and libhdf5
/// refused it ("addr overflow", a CI failure of the killed-writer test).
/// Partial bands, compressed and not, are flushed at every third row.
#[test]
fn a_writer_killed_inside_a_flush_leaves_a_readable_file() {
    let dir = std::env::temp_dir().join(format!("flexmb-flush-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for compression in [0u8, 3] {
        let path = dir.join(format!("gz{compression}.h5"));
        let config = OutputConfig {
            chunk_rows: 4,
            compression,
            flush_seconds: f64::INFINITY,
            ..OutputConfig::default()
        };
        let mut rec = Hdf5Recorder::create(&path, config).expect("create");
        rec.begin(&run_info()).expect("begin");
        let s = &mut rec.inner;
        let mut visible = 0;
        for k in 0..60u64 {
            // Smooth rows, so that deflate shrinks the bands it compresses.
            let row = |c: f64| (0..5).map(|i| c + (k * 5 + i) as f64).collect::<Vec<_>>();
            let (u, v, a) = (row(0.0), row(1.0), row(2.0));
            let lambda = [k as f64, -(k as f64)];
            let step = StepRecord {
                step: k,
                time: k as f64 * 1e-3,
                u: &u,
                v: &v,
                a: &a,
                lambda: &lambda,
                energy: Energy::default(),
                constraints: ConstraintNorms::default(),
                newton: NewtonStats::default(),
                probes: &[],
                stats: &[],
            };
            s.record(&step).expect("record");
            if k % 3 != 1 {
                continue;
            }
            // `Streamer::flush_now`, with a look inside the backend's flush.
            let what = format!("gz{compression}, row {k}");
            s.write_partial_bands(false).expect("partial bands");
            let mut before = None;
            let mut killed_rows = Vec::new();
            let rows = s.rows;
            s.backend
                .flush_observed(rows, &mut |path| match before.take() {
                    None => before = Some(superblock(path)),
                    Some(sb) => {
                        assert_eq!(decode(&superblock(path)).1, 0, "{what}: flags left set");
                        let killed = killed_before_superblock(path, &sb, "killed.h5");
                        killed_rows.push(read_rows(&killed, &what));
                    }
                })
                .expect("flush");
            s.dirty = false;
            // The first SWMR flush's file keeps the rows of the flush
            // before; the last one's has them all.
            assert!(killed_rows.len() >= 2, "{what}");
            assert_eq!(killed_rows[0], [visible; 5], "{what}");
            visible = rows as usize;
            assert_eq!(killed_rows[killed_rows.len() - 1], [visible; 5], "{what}");
        }
        assert_eq!(visible, 59);
        rec.finish(&RunStatus::Completed, 1.0).expect("finish");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! [`Streamer`]: [`Recorder`] calls turned into chunk-band writes and
//! periodic flushes on a [`Backend`] (the backend-independent half of both
//! recorders), and the output configuration check.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::kinematics::attitude::Attitude;
use crate::output::{
    AttrValue, Mesh, OutputConfig, OutputError, ProbeSummary, Recorder, RunInfo, RunStatus,
    RunTotals, StepRecord,
};

use super::layout::{
    final_attributes, h5_error, initial_attributes, plan_columns, plan_fixed, plan_groups, Column,
    Dtype, FixedDataset, Pick, POINTS,
};

/// Rows of one column buffered in memory, row-major.
#[derive(Debug, Clone)]
pub(in crate::output) enum ColumnBuf {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
}

impl ColumnBuf {
    fn new(dtype: Dtype) -> Self {
        match dtype {
            Dtype::F64 => ColumnBuf::F64(Vec::new()),
            Dtype::U64 => ColumnBuf::U64(Vec::new()),
            Dtype::U32 => ColumnBuf::U32(Vec::new()),
        }
    }

    /// Number of buffered values.
    pub(in crate::output) fn len(&self) -> usize {
        match self {
            ColumnBuf::F64(v) => v.len(),
            ColumnBuf::U64(v) => v.len(),
            ColumnBuf::U32(v) => v.len(),
        }
    }

    fn clear(&mut self) {
        match self {
            ColumnBuf::F64(v) => v.clear(),
            ColumnBuf::U64(v) => v.clear(),
            ColumnBuf::U32(v) => v.clear(),
        }
    }

    fn push(&mut self, c: &Column, rec: &StepRecord<'_>) {
        match self {
            ColumnBuf::F64(v) => match (c.source.row(rec), c.source.gathered(rec)) {
                (Some(row), _) => v.extend_from_slice(row),
                (None, Some(from)) => v.extend(c.picks.iter().map(|p| match *p {
                    Pick::Column(i) => from[i],
                    Pick::Fixed(x) => x,
                    Pick::Quaternion(d, k) => {
                        Attitude::Directors.quaternion(&d.map(|i| from[i]))[k]
                    }
                })),
                (None, None) => v.push(c.source.scalar(rec)),
            },
            ColumnBuf::U64(v) => v.push(rec.step),
            ColumnBuf::U32(v) => v.push(rec.newton.iterations),
        }
    }

    /// Writes values `range` as little-endian bytes to the start of `out`.
    pub(in crate::output) fn write_le(&self, range: std::ops::Range<usize>, out: &mut [u8]) {
        fn put<const N: usize, T: Copy>(src: &[T], out: &mut [u8], le: impl Fn(T) -> [u8; N]) {
            for (dst, &x) in out.chunks_exact_mut(N).zip(src) {
                dst.copy_from_slice(&le(x));
            }
        }
        match self {
            ColumnBuf::F64(v) => put(&v[range], out, f64::to_le_bytes),
            ColumnBuf::U64(v) => put(&v[range], out, u64::to_le_bytes),
            ColumnBuf::U32(v) => put(&v[range], out, u32::to_le_bytes),
        }
    }
}

/// What a file format library must do for [`Streamer`], which orders the
/// calls: the layout (`create_group`, `create_column`, `write_fixed`,
/// `set_attr`, then `start`), bands and flushes, and at the end
/// `set_rows`, the final `set_attr`s and `close`.
pub(in crate::output) trait Backend {
    /// Creates the group `/path`.
    fn create_group(&mut self, path: &str) -> Result<(), OutputError>;
    /// Creates a streamed dataset: 0 rows, chunked, extendible,
    /// `compression` = deflate level.
    fn create_column(&mut self, c: &Column, compression: u8) -> Result<(), OutputError>;
    /// Writes a fixed dataset whole.
    fn write_fixed(&mut self, f: &FixedDataset) -> Result<(), OutputError>;
    /// Creates or overwrites a root attribute.
    fn set_attr(&mut self, name: &str, value: &AttrValue) -> Result<(), OutputError>;
    /// Makes the file with its layout and no rows durable.
    fn start(&mut self) -> Result<(), OutputError>;
    /// Writes the rows of chunk band `first_row / chunk_rows` of column `col`
    /// (`data` holds whole rows, at most one band). `last` = the band will not
    /// be written again (it is complete, or the run ends).
    fn write_band(
        &mut self,
        col: usize,
        first_row: u64,
        data: &ColumnBuf,
        last: bool,
    ) -> Result<(), OutputError>;
    /// Sets every streamed dataset to `rows` rows and makes the file durable.
    fn flush(&mut self, rows: u64) -> Result<(), OutputError>;
    /// Sets every streamed dataset to its final `rows` rows (before the final
    /// attributes and `close`).
    fn set_rows(&mut self, rows: u64) -> Result<(), OutputError>;
    /// Closes the file.
    fn close(&mut self) -> Result<(), OutputError>;
}

/// The backend-independent [`Recorder`] logic: per-column buffers of the
/// current chunk band, band writes when a band fills, flushes every
/// `flush_seconds`.
pub(in crate::output) struct Streamer<B: Backend> {
    path: PathBuf,
    config: OutputConfig,
    flush_every: Duration,
    pub(in crate::output) backend: B,
    columns: Vec<Column>,
    /// Rows of each column's current band.
    bufs: Vec<ColumnBuf>,
    /// First row of each column's current band.
    band_start: Vec<u64>,
    pub(in crate::output) rows: u64,
    /// Lengths of `/u` and `/lambda` rows given at `begin`.
    n_dof: usize,
    n_mult: usize,
    /// Recorded times, for the XDMF side file (empty when none is written).
    times: Vec<f64>,
    /// The run's mesh, for the XDMF side file.
    mesh: Mesh,
    /// Summaries of the probes over the recorded rows (root attributes at `finish`).
    probes: Vec<(String, ProbeSummary)>,
    /// The run's totals, if given ([`Recorder::totals`]).
    totals: Option<RunTotals>,
    /// Rows were recorded since the last flush.
    pub(in crate::output) dirty: bool,
    last_flush: Instant,
    begun: bool,
    finished: bool,
    /// A band write or flush failed: columns may hold different row counts,
    /// so no further step is accepted (`finish` still closes the file).
    poisoned: bool,
}

impl<B: Backend> Streamer<B> {
    /// Checks `config` ([`validate_config`]), then creates the file at
    /// `path` with `open`; nothing is written before `begin`.
    pub(in crate::output) fn create(
        path: &Path,
        config: OutputConfig,
        open: impl FnOnce(&Path) -> Result<B, OutputError>,
    ) -> Result<Self, OutputError> {
        validate_config(path, &config)?;
        let backend = open(path)?;
        Ok(Streamer::new(path, config, backend))
    }

    /// Wraps an opened backend; nothing is written before `begin`.
    pub(in crate::output) fn new(path: &Path, config: OutputConfig, backend: B) -> Self {
        let flush_every =
            Duration::try_from_secs_f64(config.flush_seconds.max(0.0)).unwrap_or(Duration::MAX);
        Streamer {
            path: path.to_path_buf(),
            config,
            flush_every,
            backend,
            columns: Vec::new(),
            bufs: Vec::new(),
            band_start: Vec::new(),
            rows: 0,
            n_dof: 0,
            n_mult: 0,
            times: Vec::new(),
            probes: Vec::new(),
            totals: None,
            mesh: Mesh::default(),
            dirty: false,
            last_flush: Instant::now(),
            begun: false,
            finished: false,
            poisoned: false,
        }
    }

    /// Creates the groups, the streamed datasets, the fixed datasets and the
    /// initial root attributes, then makes the empty file durable.
    fn create_layout(&mut self, fixed: &[FixedDataset], info: &RunInfo) -> Result<(), OutputError> {
        let b = &mut self.backend;
        for g in plan_groups(&self.columns, fixed) {
            b.create_group(&g)?;
        }
        for c in &self.columns {
            b.create_column(c, self.config.compression)?;
        }
        for f in fixed {
            b.write_fixed(f)?;
        }
        for (name, value) in initial_attributes(info) {
            b.set_attr(&name, &value)?;
        }
        b.start()
    }

    fn check_open(&self, what: &str) -> Result<(), OutputError> {
        if self.finished {
            return Err(h5_error(&self.path, format!("{what} after finish")));
        }
        Ok(())
    }

    /// Writes every partial band with rows not yet on disk.
    pub(in crate::output) fn write_partial_bands(&mut self, last: bool) -> Result<(), OutputError> {
        for (i, buf) in self.bufs.iter().enumerate() {
            if buf.len() > 0 {
                self.backend.write_band(i, self.band_start[i], buf, last)?;
            }
        }
        Ok(())
    }

    fn flush_now(&mut self) -> Result<(), OutputError> {
        if self.dirty {
            self.write_partial_bands(false)?;
            self.backend.flush(self.rows)?;
            self.dirty = false;
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Appends one row to every column, writing the bands it completes.
    fn push_row(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        for (i, c) in self.columns.iter().enumerate() {
            let buf = &mut self.bufs[i];
            buf.push(c, rec);
            if c.row_len() > 0 && buf.len() == c.chunk_rows * c.row_len() {
                self.backend.write_band(i, self.band_start[i], buf, true)?;
                self.band_start[i] += c.chunk_rows as u64;
                buf.clear();
            }
        }
        self.rows += 1;
        if self.writes_xdmf() {
            self.times.push(rec.time);
        }
        for ((_, s), &x) in self.probes.iter_mut().zip(rec.probes) {
            s.add(rec.time, x);
        }
        self.dirty = true;
        Ok(())
    }

    /// Whether the run gets an XDMF side file: it needs `/points`, and
    /// `[output] xdmf` must not be `false` ([`OutputConfig::writes_xdmf`]).
    fn writes_xdmf(&self) -> bool {
        self.config.xdmf != Some(false) && self.columns.iter().any(|c| c.path == POINTS)
    }

    /// Best effort flush for `Drop`: data recorded so far stays readable.
    pub(in crate::output) fn flush_on_drop(&mut self) {
        if self.begun && !self.finished && !self.poisoned {
            // Errors cannot be reported from drop; the file keeps the last flush.
            let _ = self.flush_now();
        }
    }
}

/// [`Recorder`] and `Drop` for a public recorder type that wraps a
/// [`Streamer`] in its field `inner` (both backends' recorders): every call
/// goes to the streamer, and a recorder dropped mid-run flushes what it has.
macro_rules! streaming_recorder {
    ($name:ident) => {
        impl crate::output::Recorder for $name {
            fn begin(
                &mut self,
                info: &crate::output::RunInfo,
            ) -> Result<(), crate::output::OutputError> {
                self.inner.begin(info)
            }

            fn record(
                &mut self,
                rec: &crate::output::StepRecord<'_>,
            ) -> Result<(), crate::output::OutputError> {
                self.inner.record(rec)
            }

            fn finish(
                &mut self,
                status: &crate::output::RunStatus,
                t_end_reached: f64,
            ) -> Result<(), crate::output::OutputError> {
                self.inner.finish(status, t_end_reached)
            }

            fn totals(&mut self, totals: &crate::output::RunTotals) {
                self.inner.totals(totals);
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.inner.flush_on_drop();
            }
        }
    };
}
pub(in crate::output) use streaming_recorder;

/// Rejects settings no file can be written with, before the file is created.
pub(in crate::output) fn validate_config(
    path: &Path,
    config: &OutputConfig,
) -> Result<(), OutputError> {
    if config.compression > 9 {
        return Err(h5_error(
            path,
            format!("deflate level {} out of range 0..=9", config.compression),
        ));
    }
    Ok(())
}

impl<B: Backend> Recorder for Streamer<B> {
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError> {
        self.check_open("begin")?;
        if self.begun {
            return Err(h5_error(&self.path, "begin called twice"));
        }
        self.columns = plan_columns(&self.path, &self.config, info)?;
        super::xdmf::remove_stale(&self.path)?;
        let fixed = plan_fixed(info);
        (self.n_dof, self.n_mult) = (info.dof_names.len(), info.multiplier_names.len());
        self.create_layout(&fixed, info)?;
        if self.writes_xdmf() {
            self.mesh = info.mesh.clone();
        }
        self.probes = info
            .probe_names
            .iter()
            .map(|n| (n.clone(), ProbeSummary::default()))
            .collect();
        self.bufs = self
            .columns
            .iter()
            .map(|c| ColumnBuf::new(c.dtype()))
            .collect();
        self.band_start = vec![0; self.columns.len()];
        self.begun = true;
        self.last_flush = Instant::now();
        Ok(())
    }

    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        self.check_open("record")?;
        if !self.begun {
            return Err(h5_error(&self.path, "record before begin"));
        }
        if self.poisoned {
            return Err(h5_error(&self.path, "record after a failed write"));
        }
        let row_len = |name: &str, row: &[f64], n: usize| match row.len() == n {
            true => Ok(()),
            false => Err(h5_error(
                &self.path,
                format!(
                    "step {}: /{name} row has {} values, expected {n}",
                    rec.step,
                    row.len()
                ),
            )),
        };
        for c in &self.columns {
            if let (Some(n), Some(row)) = (c.width, c.source.row(rec)) {
                row_len(&c.path, row, n)?;
            }
        }
        // Gathered datasets pick from /u and /lambda of the sizes `begin` saw.
        row_len("u", rec.u, self.n_dof)?;
        row_len("lambda", rec.lambda, self.n_mult)?;
        let written = self.push_row(rec).and_then(|()| {
            if self.last_flush.elapsed() >= self.flush_every {
                self.flush_now()
            } else {
                Ok(())
            }
        });
        self.poisoned = written.is_err();
        written
    }

    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError> {
        self.check_open("finish")?;
        if !self.begun {
            self.begin(&RunInfo::default())?;
        }
        self.finished = true;
        if !self.poisoned {
            self.write_partial_bands(true)?;
        }
        let attrs = final_attributes(status, t_end_reached, self.totals.as_ref(), &self.probes);
        self.backend.set_rows(self.rows)?;
        for (name, value) in &attrs {
            self.backend.set_attr(name, value)?;
        }
        self.backend.close()?;
        if self.writes_xdmf() {
            let rows = self.times.len().min(self.rows as usize);
            super::xdmf::write_beside(&self.path, &self.mesh, &self.times[..rows])?;
        }
        Ok(())
    }

    fn totals(&mut self, totals: &RunTotals) {
        self.totals = Some(totals.clone());
    }
}

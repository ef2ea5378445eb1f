//! HDF5 output: the run layout shared by both backends (`layout.rs`,
//! documented in `docs/output-format.md`), the [`Streamer`] that turns
//! [`Recorder`] calls into chunk-band writes and periodic flushes on a
//! [`Backend`] (`streamer.rs`), the pure-Rust backend on `rust-hdf5`'s SWMR
//! writer ([`Hdf5Recorder`], `rust_backend.rs`), the C-library backend
//! (`c_backend.rs`, feature `hdf5-c`) and the reader both backends' files
//! share ([`read_hdf5`], `reader.rs`).

#[cfg(feature = "hdf5-c")]
mod c_backend;
mod layout;
mod reader;
mod rust_backend;
mod streamer;
pub(in crate::output) mod xdmf;

#[cfg(feature = "hdf5-c")]
pub use c_backend::{read_hdf5_c, Hdf5CReader, Hdf5CRecorder};
pub use layout::path_component;
pub(in crate::output) use layout::{plan_columns, plan_fixed, FixedData, MESH_BODIES, POINTS};
pub(in crate::output) use reader::assemble_run;
pub use reader::{read_hdf5, read_hdf5_run, Hdf5Reader, Hdf5Run, RunSource};
pub use rust_backend::{write_table, Hdf5Recorder, TableColumn};

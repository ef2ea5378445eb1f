//! Input: model files (TOML, `docs/model-format.md`) read into a
//! [`crate::model::Model`] with the file's `[integrator]` and `[output]`
//! tables, `--set` overrides, every error located by file, line and field.

mod file;
mod spec;

pub use file::{
    apply_sets, load_model_file, load_model_str, load_model_with_sets, read_text, ModelError,
    ModelFile,
};
pub use spec::ModelSpec;

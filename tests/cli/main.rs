//! The integration tests: one binary (as ripgrep and jj do), so the crate and the sealed
//! environment in `common` are compiled and linked once, and every test of every module runs
//! in one process with one thread pool. `suite_layout` fails when a `.rs` file under
//! `tests/` is not reached from here.

mod common;

mod commands;
mod compaction;
mod docs;
mod hostile_remotes;
mod interop;
mod layout;
mod llm;
mod projection;
mod properties;
mod safety;
mod suite_layout;
mod sync;

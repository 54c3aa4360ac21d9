//! The integration tests: one binary (as ripgrep and jj do), so the crate and the sealed
//! environment in `common` are compiled and linked once, and every test of every module runs
//! in one process with one thread pool. `suite_layout` fails when a `.rs` file under
//! `tests/` is not reached from here.
//!
//! Whole outputs are compared with insta snapshots: inline (`@"…"`) when short, files in
//! `snapshots/` otherwise, with the temporary root shown as `[ROOT]` (`TestEnv::transcript`,
//! `TestEnv::redact`). A mismatch or a missing snapshot fails the test (insta writes a
//! `.snap.new` beside it, or nothing when `CI` is set); review an intended change with
//! `cargo insta review`, or rerun with `INSTA_UPDATE=always` and read the diff.

mod common;

mod beside_git;
mod catalogue;
mod commands;
mod compaction;
mod crash_states;
mod docs;
mod fan_out;
mod fixing_mistakes;
mod follow;
mod grep;
mod handoff;
mod handoff_opencode;
mod hooks;
mod hostile_remotes;
mod html;
mod hub;
mod input_validation;
mod inside_a_turn;
mod interop;
mod layout;
mod lazy;
mod lazy_push;
mod listing;
mod llama;
mod llm;
mod mcp;
mod names;
mod opencode;
mod outline_index;
mod plain_errors;
mod private;
mod projection;
mod projects;
mod properties;
mod recognition;
mod relay;
mod safety;
mod scaffolding;
mod serve;
mod suite_layout;
mod sync;
mod titles;
mod usage;
mod who;

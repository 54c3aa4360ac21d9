//! convo: a git-backed store for LLM conversations.
//!
//! The library holds all the work; the `convo` binary parses arguments and prints.
//! See ARCHITECTURE.md for what each module owns and may not do.

pub mod agents;
pub mod clock;
pub mod compaction;
pub mod config;
pub mod event;
pub mod interop;
pub mod llm;
pub mod mcp;
pub mod ops;
pub mod projection;
pub mod render;
pub mod serve;
pub mod store;
pub mod sync;

#[cfg(test)]
mod layers;

//! One module per subcommand: an `Args` struct and a `run` function that parses, calls the
//! library, and prints.

pub mod append;
pub mod clone;
pub mod compact;
pub mod config;
pub mod diff;
pub mod export;
pub mod fetch;
pub mod fork;
pub mod fsck;
pub mod generate_docs;
pub mod import;
pub mod init;
pub mod list;
pub mod log;
pub mod new;
pub mod pull;
pub mod push;
pub mod query;
pub mod remote;
pub mod show;
pub mod switch;

/// `--format` for commands whose output scripts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// The first seven hex digits, as git abbreviates.
pub fn short_hash(id: &impl std::fmt::Display) -> String {
    id.to_string().chars().take(7).collect()
}

/// Write a file only its owner can read (mode 0600): created so, and narrowed to it when it
/// already existed with a wider mode, before any byte is written.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

/// Create `dir` and any missing parents with mode 0700; folders that exist keep their mode.
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

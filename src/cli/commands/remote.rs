use std::io::Write;

use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Manage the git remotes conversations are shared through
///
/// A remote is anything git can talk to: a path, file://, git://, http(s)://, ssh.
/// A relative path is taken from the current directory, as git takes it in a repository,
/// and kept absolute. Credentials go through git's own helpers; convo never stores them.
#[derive(clap::Args)]
pub struct Args {
    /// List each remote with its URL, as the list always does (git's `remote -v`)
    #[arg(short, long)]
    verbose: bool,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Add a remote
    Add {
        /// The remote's name, as push, pull and fetch take it (e.g. origin)
        name: String,
        /// Where it is: a path, file://, git://, http(s)://, or ssh (user@host:path)
        url: String,
    },
    /// Remove a remote (the conversations stay)
    Remove {
        /// The remote's name
        name: String,
    },
    /// Change a remote's URL
    SetUrl {
        /// The remote's name
        name: String,
        /// Its new URL: a path, file://, git://, http(s)://, or ssh (user@host:path)
        url: String,
    },
    /// List remotes with their URLs (the default)
    List,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    match args.action.unwrap_or(Action::List) {
        Action::Add { name, url } => sync::remote_add(&store, &name, &from_here(&url)?)?,
        Action::Remove { name } => sync::remote_remove(&store, &name)?,
        Action::SetUrl { name, url } => sync::remote_set_url(&store, &name, &from_here(&url)?)?,
        Action::List => {
            let mut out = ctx.ui.stdout();
            for (name, url) in sync::remotes(&store)? {
                writeln!(out, "{name}\t{url}")?;
            }
        }
    }
    Ok(())
}

/// `url` as git would reach it from the current directory: a relative path made absolute
/// (the store is usually elsewhere, and git would take it from there); URLs and ssh's
/// `host:path` as they are.
fn from_here(url: &str) -> Result<String, CommandError> {
    if url.contains("://") || !sync::is_local_path(url) || std::path::Path::new(url).is_absolute() {
        return Ok(url.to_owned());
    }
    let absolute = std::path::absolute(url)
        .map_err(|e| CommandError::input(format!("{url}: cannot make it absolute: {e}")).hint("give the full path"))?;
    Ok(absolute.to_string_lossy().into_owned())
}

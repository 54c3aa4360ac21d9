use std::path::PathBuf;

use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Clone a store from a git remote
///
/// Without PATH the clone goes where the store would be (--store, $CONVO_DIR, or
/// $XDG_DATA_HOME/convo), which must not exist yet.
#[derive(clap::Args)]
pub struct Args {
    /// What git can clone: a path, file://, git://, http(s)://, ssh
    url: String,
    /// Where to put the store
    path: Option<PathBuf>,
    /// Fetch the hub's catalog only: `list` reads it, and a command that reads a
    /// conversation fetches that one first; `push` sends what was added here
    #[arg(long)]
    lazy: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let path = match args.path {
        Some(path) => path,
        None => ctx
            .location
            .as_ref()
            .map(|l| l.path.clone())
            .ok_or_else(|| CommandError::input("no PATH given and HOME is not set"))?,
    };
    if path.exists() && std::fs::read_dir(&path).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(CommandError::input(format!("{} already exists and is not empty", path.display()))
            .hint("clone into a new PATH"));
    }
    let progress = ctx.ui.progress();
    let durability = ctx.durability_setting()?;
    let remote_error = |e: sync::SyncError| match e {
        // No remote is set up yet: the URL itself is what to check.
        sync::SyncError::Git { .. } => CommandError::new(Kind::Remote, e.to_string())
            .hint("check the URL: a path, file://, git://, http(s)://, or ssh (user@host:path) that git can reach"),
        e => e.into(),
    };
    if args.lazy {
        let (store, catalog) = sync::lazy::clone(&args.url, &path, durability).map_err(remote_error)?;
        let count = store.catalog_len(&catalog)?;
        ctx.note(&format!(
            "Cloned {} into {} lazily ({count} conversation{} listed, none fetched yet)",
            args.url,
            path.display(),
            if count == 1 { "" } else { "s" }
        ));
        ctx.tell_identity_of(&store);
        return Ok(());
    }
    let store = sync::clone(&args.url, &path, progress, durability).map_err(remote_error)?;
    let count = store.conversation_ids()?.len();
    ctx.note(&format!(
        "Cloned {} into {} ({count} conversation{})",
        args.url,
        path.display(),
        if count == 1 { "" } else { "s" }
    ));
    ctx.tell_identity_of(&store);
    Ok(())
}

use std::io::Write;
use std::path::PathBuf;

use convo::config;
use convo::ops::config_edit;

use super::user_path;
use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Trust a store's own config (convo.toml, config events) to name providers
///
/// Recorded in your user config as trust.stores, never in the store, like git's
/// safe.directory. Trust only stores whose writers you trust with your API keys: a
/// provider's base_url decides where conversations and keys are sent.
#[derive(clap::Args)]
pub struct Args {
    /// The store [default: the current one: --store, $CONVO_DIR, then the default]
    path: Option<PathBuf>,
    /// Stop trusting the store
    #[arg(long)]
    remove: bool,
    /// Print the stores you trust, one a line
    #[arg(long, conflicts_with_all = ["remove", "path"])]
    list: bool,
}

/// Add the store to (or with `--remove` take it from) `trust.stores` in the user file;
/// `--list` prints the stores trusted, the user file's and --config's.
pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    if args.list {
        let mut out = ctx.ui.stdout();
        for store in config::trusted_stores(&ctx.base_layers()?) {
            writeln!(out, "{store}")?;
        }
        return Ok(());
    }
    let user = user_path(ctx)?;
    let target = match args.path {
        Some(path) => path,
        None => ctx.location.as_ref().map(|l| l.path.clone()).ok_or_else(|| {
            CommandError::input("cannot find the store: HOME is not set").hint("name it: `convo config trust PATH`")
        })?,
    };
    let target = crate::cli::canonical(&target);
    let shown = target.display().to_string();
    let same = |s: &str| crate::cli::store_trusted(&target, &[s.to_owned()]);
    if args.remove {
        if !config_edit::set_trust(&user, &shown, &same, true)? {
            return Err(CommandError::new(Kind::NotFound, format!("{shown} is not among the stores you trust"))
                .hint("`convo config trust --list` prints them"));
        }
        ctx.note(&format!("No longer trusting {shown}: its convo.toml and config events cannot name providers"));
        return Ok(());
    }
    // Only a store can be trusted: a typo should not sit in the list waiting for one.
    convo::store::Store::open(&target)?;
    if !config_edit::set_trust(&user, &shown, &same, false)? {
        ctx.note(&format!("{shown} is already trusted"));
        return Ok(());
    }
    ctx.note(&format!("Trusting {shown}: its convo.toml and config events may name providers (in {})", user.display()));
    Ok(())
}

use std::io::Write;
use std::path::PathBuf;

use convo::store::Store;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Create a store (a git repository for conversations)
///
/// Without PATH, creates the store convo uses by default: --store, $CONVO_DIR, or
/// $XDG_DATA_HOME/convo. Running it on an existing store is safe and changes nothing (a
/// store from an older convo gets the marker stores carry now). An empty git repository
/// becomes a store; any other git repository is refused.
#[derive(clap::Args)]
pub struct Args {
    /// Where to create the store
    path: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let path =
        match args.path {
            Some(path) => path,
            None => ctx.location.as_ref().map(|l| l.path.clone()).ok_or_else(|| {
                CommandError::input("no PATH given and HOME is not set").hint("run `convo init PATH`")
            })?,
        };
    let (store, created) = Store::init(&path)?;
    let root = std::fs::canonicalize(store.root()).unwrap_or_else(|_| store.root().to_owned());
    if !ctx.ui.quiet {
        let verb = if created { "Initialized empty" } else { "Reinitialized existing" };
        writeln!(ctx.ui.stdout(), "{verb} convo store in {}", root.display())?;
    }
    ctx.tell_identity_of(&store);
    Ok(())
}

use convo::ops;
use convo::store::Store;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// `compact --undo [COMPACTION]`: withdraw `target` (default: the latest in force) by
/// appending its revocation; with none in force, say so and succeed.
pub(super) fn run(ctx: &Ctx, store: &Store, id: Option<&str>, target: Option<&str>) -> Result<(), CommandError> {
    let tx = store.transaction()?;
    let (id, target) = ops::compact::undo_target(store, id, target)?;
    let undone = match ops::compact::undo_compaction(store, tx, &id, target.as_deref(), &ctx.clock) {
        Err(e @ ops::OpsError::NothingToUndo) => {
            ctx.note(&e.to_string());
            return Ok(());
        }
        undone => undone?,
    };
    ctx.ui.committed(Some(&id), &undone.appended);
    Ok(())
}

//! What `compact` says after its commit: a budget it could not meet, a range it widened.

use convo::ops::Planned;

use crate::cli::Ctx;

pub(super) fn say(ctx: &Ctx, planned: &Planned) {
    if let Some(ladder) = planned.ladder.as_ref().filter(|l| !l.fits) {
        ctx.ui.warning(&format!(
            "the view is still ~{} tokens, over the budget of {}: no step gets closer",
            convo::render::thousands(planned.estimate.after),
            convo::render::thousands(ladder.budget)
        ));
    }
    if planned.prepared.widened {
        let (a, b) = planned.prepared.requested;
        let c = &planned.prepared.compaction;
        ctx.note(&format!(
            "note: turns {a}-{b} widened to {}-{} to swallow a summary they overlapped",
            c.from_turn, c.to_turn
        ));
    }
}

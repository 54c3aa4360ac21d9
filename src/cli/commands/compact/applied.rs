//! What `compact` says after its commit: a budget it could not meet, the protection a budget
//! gave up, a model summary cut off under a budget (the digest in its place), a range it
//! widened.

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
    if let Some(gave_up) = planned.ladder.as_ref().and_then(|l| l.gave_up.as_deref()) {
        ctx.note(&format!("note: to fit the budget, gave up {gave_up}"));
    }
    if let Some(cap) = planned.digest_stood_in {
        ctx.ui.warning(&format!(
            "the model's summary was cut off at {} tokens; the digest stands in",
            convo::render::thousands(cap)
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

use convo::compaction::Record;
use convo::config::Resolved;
use convo::event::Event;
use convo::event::trail::{self, Trail};
use convo::ops::plan::Conversation;
use convo::{ops, projection, render, store};

use crate::cli::Ctx;
use crate::cli::capabilities::SummaryChoice;
use crate::cli::command_error::CommandError;

/// Print what the compaction would do; with `verbose`, also the projected view of its range.
pub(super) fn run(ctx: &Ctx, d: DryRun) -> Result<(), CommandError> {
    let c = &d.planned.prepared.compaction;
    let name = store::subject::name(d.id, d.store.meta(d.id)?.title.as_deref());
    // A budget's steps come first, whichever step was chosen.
    let mut steps_tried = Vec::new();
    if let Some(ladder) = &d.planned.ladder {
        let steps: Vec<render::compare::StepLine> = ladder
            .rungs
            .iter()
            .map(|r| render::compare::StepLine {
                name: r.step.name(),
                policies: r.prepared.compaction.describe(),
                after: r.estimate.after,
            })
            .collect();
        let chosen = ladder.chosen();
        let c = &chosen.prepared.compaction;
        let line = render::compare::ChosenLine {
            step: chosen.step.name(),
            turns: (c.from_turn, c.to_turn),
            partial: ladder.partial(),
            after: chosen.estimate.after,
            fits: ladder.fits,
            gave_up: ladder.gave_up.as_deref(),
            under: chosen.under.as_ref().map(|u| u.step.name()),
        };
        render::compare::ladder(&mut steps_tried, ladder.budget, ladder.now, &steps, &line)?;
    }
    // The range's text, for what outlines do not hold.
    let events = || -> Result<std::borrow::Cow<[Event]>, CommandError> {
        Ok(match d.conversation.events {
            Some(events) => std::borrow::Cow::Borrowed(events),
            None => std::borrow::Cow::Owned(d.store.events(d.id)?),
        })
    };
    if d.planned.prepared.pending.is_some() {
        let job = ops::compact::summary_job(
            &events()?,
            d.planned,
            d.config,
            d.choice.model.as_deref(),
            d.choice.focus.as_deref(),
        )?;
        let calls = job.chunks.len() + usize::from(job.chunks.len() > 1);
        let plan = render::compare::SummaryPlan {
            name: &name,
            compaction: c,
            model: &job.model.name,
            input_tokens: job.input_tokens,
            calls,
            total: d.planned.estimate.before,
            under: d.planned.under().map(|u| &u.compaction),
        };
        let mut stdout = ctx.ui.stdout();
        std::io::Write::write_all(&mut stdout, &steps_tried)?;
        render::compare::summary_plan(&mut stdout, &plan)?;
        return Ok(());
    }
    let mut out = ctx.ui.paged();
    out.writer().write_all(&steps_tried)?;
    let plan = render::compare::Plan {
        name: &name,
        compaction: c,
        under: d.planned.under().map(|u| &u.compaction),
        widened_from: d.planned.prepared.widened.then_some(d.planned.prepared.requested),
        estimate: &d.planned.estimate,
        every_turn: d.verbose,
    };
    render::compare::plan(out.writer(), &plan)?;
    if d.planned.ladder.is_some() {
        trail_kept(out.writer(), &events()?, d.planned)?;
    }
    if d.verbose {
        let with = applied(&events()?, d.planned);
        let (from, to) = d.planned.turns();
        let in_range: Vec<_> = projection::project(&with)?
            .into_iter()
            .filter(|p| p.raw_turn.is_some_and(|t| (from..=to).contains(&t)))
            .collect();
        let (events, marks) = render::marked(&in_range);
        render::conversation(out.writer(), &events, &marks, render::Detail::default(), ctx.ui.theme)?;
    }
    out.finish()?;
    Ok(())
}

/// `events` with the planned compaction events appended.
fn applied(events: &[Event], planned: &ops::Planned) -> Vec<Event> {
    let mut with = events.to_vec();
    for (id, c) in planned.compactions() {
        with.push(Record::Apply(c.clone()).to_draft().into_event(id, planned.ts.clone()));
    }
    with
}

/// What of the conversation's trail (paths, commands, errors, commits) the view keeps once
/// the plan is applied (both events of a summary over the oldest part), so a budget's cost
/// is seen.
fn trail_kept(out: &mut dyn std::io::Write, events: &[Event], planned: &ops::Planned) -> Result<(), CommandError> {
    let view = |events: &[Event]| -> Result<Vec<Event>, CommandError> {
        Ok(projection::project(events)?.into_iter().map(|p| p.event).collect())
    };
    let trail = Trail::of(&view(events)?);
    let with = applied(events, planned);
    let kinds = trail.kept_in(&trail::text_of(&view(&with)?));
    let kinds: Vec<(&str, usize, usize)> = kinds.iter().map(|(m, kept, all)| (m.name(), *kept, *all)).collect();
    render::compare::trail_kept(out, &kinds)?;
    Ok(())
}

pub(super) struct DryRun<'a> {
    pub(super) store: &'a store::Store,
    pub(super) id: &'a str,
    pub(super) conversation: Conversation<'a>,
    pub(super) config: &'a Resolved,
    pub(super) planned: &'a ops::Planned,
    pub(super) choice: &'a SummaryChoice,
    pub(super) verbose: bool,
}

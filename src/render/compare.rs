//! Two views of one conversation side by side: the unified diff and the per-turn token
//! table of `convo diff`, and the plan `convo compact --dry-run` prints before writing.

use std::io::{self, Write};

use super::{Detail, Theme, conversation, escape_line, marked, thousands};
use crate::compaction::Compaction;
use crate::projection::{Estimate, Projected};

fn text_of(view: &[Projected]) -> io::Result<String> {
    let (events, marks) = marked(view);
    let mut bytes = Vec::new();
    conversation(&mut bytes, &events, &marks, Detail::default(), Theme::default())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A unified diff of the two views' text forms, headed `ID LABEL`.
pub fn unified(
    out: &mut dyn Write,
    id: &str,
    before: &[Projected],
    after: &[Projected],
    (a, b): (&str, &str),
    theme: Theme,
) -> io::Result<()> {
    let (old, new) = (text_of(before)?, text_of(after)?);
    let diff = similar::TextDiff::from_lines(&old, &new);
    let (a, b) = (escape_line(a), escape_line(b));
    let text = diff.unified_diff().context_radius(3).header(&format!("{id} {a}"), &format!("{id} {b}")).to_string();
    for line in text.lines() {
        writeln!(out, "{}", theme.diff_line(line))?;
    }
    Ok(())
}

fn approx(n: u64) -> String {
    format!("~{}", thousands(n))
}

/// Per-turn estimated tokens of two views, a `*` on the turns that differ, and the totals.
pub fn stat(out: &mut dyn Write, e: &Estimate, (a, b): (&str, &str)) -> io::Result<()> {
    writeln!(out, "{:>6}  {:>12}  {:>12}", "turn", escape_line(a), escape_line(b))?;
    for t in &e.turns {
        let turn = t.turn.map_or("-".into(), |t| t.to_string());
        let mark = if t.before != t.after { " *" } else { "" };
        writeln!(out, "{turn:>6}  {:>12}  {:>12}{mark}", approx(t.before), approx(t.after))?;
    }
    writeln!(out, "{:>6}  {:>12}  {:>12}  tokens (chars/4)", "total", approx(e.before), approx(e.after))
}

/// A compaction not yet written, as `compact --dry-run` shows it.
pub struct Plan<'a> {
    /// The conversation as commit subjects name it (`"fix login"` or its id).
    pub name: &'a str,
    pub compaction: &'a Compaction,
    /// A cheaper step laid under a summary over only the oldest part, in the same commit.
    pub under: Option<&'a Compaction>,
    /// The turns asked for, before summary widening, if it widened them.
    pub widened_from: Option<(u64, u64)>,
    pub estimate: &'a Estimate,
    /// List every turn of a long range, not only its first and last.
    pub every_turn: bool,
}

/// Rows shown at each end of a long range's table.
const EDGE_ROWS: usize = 5;

/// The range, the policies, the turns in range with their tokens now and after, and the total.
pub fn plan(out: &mut dyn Write, p: &Plan) -> io::Result<()> {
    let c = p.compaction;
    writeln!(
        out,
        "Would compact {} turns {}-{} {} (profile {})",
        escape_line(p.name),
        c.from_turn,
        c.to_turn,
        c.describe(),
        c.profile.as_deref().unwrap_or("-"),
    )?;
    if let Some(u) = p.under {
        under_line(out, c, u)?;
    }
    if let Some((a, b)) = p.widened_from {
        writeln!(out, "(turns {a}-{b} widened so that summaries do not partly overlap)")?;
    }
    writeln!(out, "{:>6}  {:>10}  {:>10}", "turn", "now", "after")?;
    let (from, to) =
        p.under.map_or((c.from_turn, c.to_turn), |u| (c.from_turn.min(u.from_turn), c.to_turn.max(u.to_turn)));
    let rows: Vec<_> = p.estimate.turns.iter().filter(|t| t.turn.is_some_and(|t| (from..=to).contains(&t))).collect();
    // A long range is summarised (its first and last turns) unless every turn is asked for:
    // 200,000 rows help nobody.
    let shown = if p.every_turn || rows.len() <= 2 * EDGE_ROWS + 1 { rows.len() } else { EDGE_ROWS };
    for t in &rows[..shown] {
        writeln!(out, "{:>6}  {:>10}  {:>10}", t.turn.unwrap_or(0), approx(t.before), approx(t.after))?;
    }
    if shown < rows.len() {
        writeln!(
            out,
            "{:>6}  ({} more turns; -v lists every one)",
            "…",
            thousands((rows.len() - 2 * EDGE_ROWS) as u64)
        )?;
        for t in &rows[rows.len() - EDGE_ROWS..] {
            writeln!(out, "{:>6}  {:>10}  {:>10}", t.turn.unwrap_or(0), approx(t.before), approx(t.after))?;
        }
    }
    let e = p.estimate;
    let saved = if e.before > 0 { 100.0 * (e.before as f64 - e.after as f64) / e.before as f64 } else { 0.0 };
    writeln!(
        out,
        "total  ~{} -> ~{} tokens (chars/4), {saved:.1}% smaller; nothing written (--dry-run)",
        thousands(e.before),
        thousands(e.after)
    )
}

/// The line under a plan whose summary covers only the oldest part of the range: where the
/// summary `c` ends and the cheaper step `u` laid under it in the same commit.
fn under_line(out: &mut dyn Write, c: &Compaction, u: &Compaction) -> io::Result<()> {
    writeln!(
        out,
        "  over the oldest part (to event {}); under it, turns {}-{} {} (one commit)",
        crate::projection::id_tail(&c.to_event),
        u.from_turn,
        u.to_turn,
        u.describe(),
    )
}

/// A summary a model would write, as `compact --summarize --dry-run` shows it.
pub struct SummaryPlan<'a> {
    pub name: &'a str,
    pub compaction: &'a Compaction,
    pub model: &'a str,
    /// Tokens of raw events sent, all calls together.
    pub input_tokens: u64,
    pub calls: usize,
    /// Tokens of the projected view now.
    pub total: u64,
    /// A budget's cheaper step under a summary over the oldest part of the range.
    pub under: Option<&'a Compaction>,
}

pub fn summary_plan(out: &mut dyn Write, p: &SummaryPlan) -> io::Result<()> {
    let c = p.compaction;
    writeln!(
        out,
        "Would compact {} turns {}-{} [summary by {}] (profile {})",
        escape_line(p.name),
        c.from_turn,
        c.to_turn,
        p.model,
        c.profile.as_deref().unwrap_or("-"),
    )?;
    if let Some(u) = p.under {
        under_line(out, c, u)?;
    }
    writeln!(
        out,
        "would send ~{} tokens of raw events to {} in {} call{}, and write the summary it returns\n\
         total now ~{} tokens (chars/4); nothing sent, nothing written (--dry-run)",
        thousands(p.input_tokens),
        p.model,
        p.calls,
        if p.calls == 1 { "" } else { "s" },
        thousands(p.total),
    )
}

/// One step a budget tried (see `ops::budget`), as `compact --budget --dry-run` lists it.
pub struct StepLine<'a> {
    pub name: &'a str,
    /// The policies, as `Compaction::describe` puts them.
    pub policies: String,
    pub after: u64,
}

/// What a budget chose: a step, over the turns it covers, and the protection it gave up.
pub struct ChosenLine<'a> {
    pub step: &'a str,
    pub turns: (u64, u64),
    /// It covers less than its step over the whole range: only the oldest part needed.
    pub partial: bool,
    pub after: u64,
    pub fits: bool,
    pub gave_up: Option<&'a str>,
    /// The cheaper step laid under a summary over the oldest part, by name.
    pub under: Option<&'a str>,
}

/// The steps tried for a budget (each over the whole range), then the compaction chosen.
pub fn ladder(out: &mut dyn Write, budget: u64, now: u64, steps: &[StepLine], chosen: &ChosenLine) -> io::Result<()> {
    writeln!(out, "Budget {} tokens; the view is ~{} now", thousands(budget), thousands(now))?;
    writeln!(out, "  {:<10}  {:>10}  policies", "step", "after")?;
    let mut marked = false;
    for s in steps {
        let mark = if !marked && s.name == chosen.step && chosen.gave_up.is_none() && chosen.fits {
            marked = true;
            "  <- the first that fits"
        } else {
            ""
        };
        writeln!(out, "  {:<10}  {:>10}  {}{mark}", s.name, approx(s.after), s.policies)?;
    }
    let (a, b) = chosen.turns;
    let under = chosen.under.map(|u| format!(", the rest at {u}")).unwrap_or_default();
    let part = if chosen.partial { format!(", only the oldest part needed{under}") } else { String::new() };
    let verdict = if chosen.fits { "" } else { ": none fits, the closest" };
    writeln!(out, "Chosen: {} over turns {a}-{b}{part}, ~{} tokens{verdict}", chosen.step, thousands(chosen.after))?;
    if let Some(gave_up) = chosen.gave_up {
        writeln!(out, "Gave up: {gave_up}")?;
    }
    Ok(())
}

/// The trail (`convo::event::trail`) a compaction keeps, per kind: kept/all.
pub fn trail_kept(out: &mut dyn Write, kinds: &[(&str, usize, usize)]) -> io::Result<()> {
    let cells: Vec<String> = kinds.iter().map(|(name, kept, all)| format!("{name} {kept}/{all}")).collect();
    writeln!(out, "Trail kept: {}", cells.join(", "))
}

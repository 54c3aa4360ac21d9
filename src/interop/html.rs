//! The HTML export: one self-contained page a person reads in a browser, holding both what
//! was said (every raw event) and what a model is sent (the projection), with a toggle
//! between them. It owns how a conversation looks on that page: the header (title, models,
//! counts, token estimates and a per-turn bar), messages as Markdown, tool calls, results
//! and reasoning folded, and what each compaction did to which events.
//!
//! Stored text is untrusted (it may come from a remote or a tool's output), and a page is
//! opened from disk where a script could read the reader's other files: every piece of it
//! is escaped, Markdown's raw HTML becomes text, only http(s) and mailto links survive,
//! images become their alt text and URL, and a Content-Security-Policy forbids any load, so
//! the one script that runs is the page's own toggle. Nothing here does I/O beyond the
//! `Write` it is handed.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use pulldown_cmark::{CowStr, Event as Md, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

use crate::compaction::Record;
use crate::event::outline::Outlined;
use crate::event::{Event, Kind, turn_numbers};
use crate::projection::{self, Edit, Estimate, InForce, Item, Origin, Projected, ProjectionError};

/// Which of the page's two views it opens on (the URL's `#raw` or `#compacted` overrides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Raw,
    Compacted,
}

impl Start {
    fn name(self) -> &'static str {
        match self {
            Start::Raw => "raw",
            Start::Compacted => "compacted",
        }
    }
}

/// A conversation laid out for the page: its raw events and, decided once, the projection
/// of them (the compactions in force, the view's items and events, the token estimates).
pub struct Page<'a> {
    title: &'a str,
    events: &'a [Event],
    turns: Vec<Option<u64>>,
    in_force: Vec<InForce>,
    /// The view, each item beside the event it makes (materialise is one to one).
    view: Vec<(Item, Projected)>,
    estimate: Estimate,
}

/// What the compacted view does with one raw event.
enum Fate<'p> {
    Sent,
    /// Sent with one part replaced by compaction number `.1`.
    Edited(&'p Edit, usize),
    /// Replaced, with the rest of its range, by compaction number `.0`'s summary.
    Summarised(usize),
    /// Reasoning a compaction strips.
    ReasoningStripped(Option<usize>),
    /// A tool call or result a compaction omits, or the projection leaves out because its
    /// other half is gone (the view must stay valid to send).
    LeftOut(Option<usize>),
}

impl<'a> Page<'a> {
    pub fn new(title: &'a str, events: &'a [Event]) -> Result<Self, ProjectionError> {
        let outlined = Outlined::of(events);
        let items = projection::view(&outlined)?;
        let in_force = projection::in_force_outlined(&outlined)?;
        let made = projection::materialise(&items, events);
        let estimate = projection::compare(&projection::raw_view(events), &made);
        let view = items.into_iter().zip(made).collect();
        Ok(Page { title, events, turns: turn_numbers(events), in_force, view, estimate })
    }

    /// Compactions in force are numbered from 1, oldest first, as the header lists them.
    fn number(&self, id: &str) -> Option<usize> {
        self.in_force.iter().position(|c| c.id == id).map(|n| n + 1)
    }

    fn covering(&self, index: usize) -> impl Iterator<Item = (usize, &InForce)> {
        self.in_force
            .iter()
            .enumerate()
            .rev()
            .filter(move |(_, c)| c.start <= index && index <= c.end)
            .map(|(n, c)| (n + 1, c))
    }

    fn fates(&self) -> Vec<Fate<'_>> {
        let mut sent: Vec<Option<(&Edit, &Origin)>> = vec![None; self.events.len()];
        for (item, made) in &self.view {
            if let Item::Raw { index, edit, .. } = item {
                sent[*index] = Some((edit, &made.origin));
            }
        }
        sent.into_iter()
            .enumerate()
            .map(|(index, sent)| match sent {
                Some((edit, Origin::Rewritten { by })) => Fate::Edited(edit, self.number(by).unwrap_or(0)),
                Some(_) => Fate::Sent,
                None => {
                    if let Some((n, _)) = self.covering(index).find(|(_, c)| c.compaction.summary.is_some()) {
                        return Fate::Summarised(n);
                    }
                    let by = self.covering(index).next().map(|(n, _)| n);
                    match self.events[index].kind {
                        Kind::Reasoning { .. } => Fate::ReasoningStripped(by),
                        _ => Fate::LeftOut(by),
                    }
                }
            })
            .collect()
    }

    /// Every model that answered, in the order of first use (a conversation may switch, or
    /// an agent hand parts to a smaller one); else, before any answer names one, the model
    /// it is set to use (its latest `llm.model` config event).
    fn models(&self) -> Vec<&str> {
        let mut used: Vec<&str> = Vec::new();
        for model in self.events.iter().filter_map(|e| e.extra.get("model")?.as_str()) {
            if !used.contains(&model) {
                used.push(model);
            }
        }
        if used.is_empty() {
            let configured = self.events.iter().rev().find_map(|e| match &e.kind {
                Kind::Config { set } => set
                    .get("llm.model")
                    .or_else(|| set.get("llm").and_then(|l| l.get("model")))
                    .and_then(serde_json::Value::as_str),
                _ => None,
            });
            used.extend(configured);
        }
        used
    }

    pub fn write(&self, out: &mut dyn Write, start: Start) -> io::Result<()> {
        let mut s = String::new();
        self.head(&mut s, start);
        self.header(&mut s, Some(start));
        s.push_str("<main>\n");
        self.raw(&mut s, start == Start::Raw, &Slice::whole(self.events.len()));
        self.compacted(&mut s, start == Start::Compacted, &Slice::whole(self.view.len()));
        s.push_str("</main>\n<footer>Exported by convo. Token counts are estimates: characters / 4.</footer>\n");
        s.push_str("<script>");
        s.push_str(SCRIPT);
        s.push_str("</script>\n</body></html>\n");
        out.write_all(s.as_bytes())
    }

    fn head(&self, s: &mut String, start: Start) {
        let _ = write!(
            s,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"color-scheme\" content=\"light dark\">\n\
             <meta name=\"generator\" content=\"convo\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body data-view=\"{}\">\n",
            escape(self.title),
            start.name()
        );
    }

    /// What the model calls used, as the agent or provider recorded them: a row of the
    /// header's facts, none when nothing was recorded.
    fn usage_row(&self) -> String {
        let usage = crate::event::usage_of(self.events);
        if usage.is_empty() {
            return String::new();
        }
        let n = |v: Option<u64>| thousands(v.unwrap_or(0));
        format!(
            "<div><dt>Usage</dt><dd>{} in · {} out · {} cache read · {} cache write</dd></div>",
            n(usage.input_tokens),
            n(usage.output_tokens),
            n(usage.cache_read_tokens),
            n(usage.cache_write_tokens)
        )
    }

    /// The header without the page's own toggle (`convo serve` links the views instead).
    pub fn header_html(&self) -> String {
        let mut s = String::new();
        self.header(&mut s, None);
        s
    }

    /// How many entries `view` has: raw events, or the items of the compacted view.
    pub fn len(&self, view: Start) -> usize {
        match view {
            Start::Raw => self.events.len(),
            Start::Compacted => self.view.len(),
        }
    }

    /// Whether the conversation has no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Where raw event `id` is.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.events.iter().position(|e| e.id == id)
    }

    /// One view, entries `slice.range` of it: what `convo serve` sends a page at a time,
    /// raw events anchored (`id="e<index>"`) and each compacted entry that stands for raw
    /// events linked to the first of them through `slice.link`.
    pub fn view_html(&self, view: Start, slice: &Slice) -> String {
        let mut s = String::new();
        match view {
            Start::Raw => self.raw(&mut s, true, slice),
            Start::Compacted => self.compacted(&mut s, true, slice),
        }
        s
    }

    fn header(&self, s: &mut String, start: Option<Start>) {
        let turns = self.turns.iter().flatten().max().map_or(0, |t| t + 1);
        let sent = self.view.len();
        let (before, after) = (self.estimate.before, self.estimate.after);
        let _ = write!(s, "<header class=\"top\">\n<h1>{}</h1>\n<dl class=\"facts\">", escape(self.title));
        let models = self.models();
        if !models.is_empty() {
            let label = if models.len() == 1 { "Model" } else { "Models" };
            let named: Vec<String> = models.iter().map(|m| escape(m)).collect();
            let _ = write!(s, "<div><dt>{label}</dt><dd>{}</dd></div>", named.join(" · "));
        }
        let _ = writeln!(
            s,
            "<div><dt>Turns</dt><dd>{}</dd></div><div><dt>Events</dt><dd>{} raw · {sent} sent</dd></div>\
             <div><dt>Tokens</dt><dd>~{} raw → ~{} compacted{}</dd></div>\
             <div><dt>Compactions</dt><dd>{} in force</dd></div>{}</dl>",
            thousands(turns),
            thousands(self.events.len() as u64),
            thousands(before),
            thousands(after),
            saving(before, after),
            self.in_force.len(),
            self.usage_row()
        );
        self.bars(s);
        if !self.in_force.is_empty() {
            s.push_str("<ol class=\"compactions\">\n");
            for (n, c) in self.in_force.iter().enumerate() {
                let _ = writeln!(s, "<li>{}</li>", self.compaction_card(n + 1, c));
            }
            s.push_str("</ol>\n");
        }
        let Some(start) = start else {
            s.push_str("</header>\n");
            return;
        };
        let selected = |v: Start| if v == start { "true" } else { "false" };
        let _ = write!(
            s,
            "<nav class=\"toggle\" aria-label=\"view\"><a href=\"#raw\" data-show=\"raw\" aria-selected=\"{}\">\
             Raw events <small>everything stored</small></a><a href=\"#compacted\" data-show=\"compacted\" \
             aria-selected=\"{}\">Compacted view <small>what the model is sent</small></a></nav>\n</header>\n",
            selected(Start::Raw),
            selected(Start::Compacted)
        );
    }

    /// One column per turn: raw tokens behind, compacted in front, scaled to the largest.
    fn bars(&self, s: &mut String) {
        let max = self.estimate.turns.iter().map(|t| t.before.max(t.after)).max().unwrap_or(0).max(1);
        s.push_str("<figure class=\"chart\"><div class=\"bars\" role=\"img\" aria-label=\"tokens per turn\">");
        for t in &self.estimate.turns {
            let label = t.turn.map_or("before the first turn".to_owned(), |t| format!("turn {t}"));
            let _ = write!(
                s,
                "<div class=\"col\" title=\"{label}: ~{} raw, ~{} compacted\"><i class=\"raw\" style=\"height:{}%\"></i>\
                 <i class=\"cmp\" style=\"height:{}%\"></i></div>",
                thousands(t.before),
                thousands(t.after),
                percent(t.before, max),
                percent(t.after, max)
            );
        }
        let first =
            self.estimate.turns.first().and_then(|t| t.turn).map_or("start".to_owned(), |t| format!("turn {t}"));
        let last = self.estimate.turns.last().and_then(|t| t.turn).map_or("start".to_owned(), |t| format!("turn {t}"));
        let _ = writeln!(
            s,
            "</div><figcaption><span>{first}</span><span class=\"key\"><i class=\"raw\"></i> raw \
             <i class=\"cmp\"></i> compacted · tokens per turn, tallest ~{}</span><span>{last}</span></figcaption></figure>",
            thousands(max)
        );
    }

    /// What compaction number `n` is, covers and does: its summary in full.
    fn compaction_card(&self, n: usize, c: &InForce) -> String {
        let c_ = &c.compaction;
        let turns = match (c.first_turn, c.last_turn) {
            (Some(a), Some(b)) if a == b => format!("turn {a}"),
            (Some(a), Some(b)) => format!("turns {a}–{b}"),
            _ => "before the first turn".to_owned(),
        };
        let what = c_.describe();
        let what = what.trim_start_matches('[').trim_end_matches(']');
        let mut card = format!(
            "<div class=\"compaction\"><div class=\"ctitle\"><b>Compaction #{n}</b> · {turns} · events {}–{} ({}) · {}",
            c.start,
            c.end,
            if c.end == c.start { "1 event".to_owned() } else { format!("{} events", c.end - c.start + 1) },
            escape(what)
        );
        if let Some(t) = c_.tokens {
            let _ = write!(card, " · ~{} → ~{} tokens when made", thousands(t.before), thousands(t.after));
        }
        card.push_str("</div>");
        let stripped = self.stripped_in(n);
        if !stripped.is_empty() {
            let _ = write!(card, "<div class=\"stripped\">In the compacted view: {}</div>", stripped.join(", "));
        }
        if let Some(summary) = &c_.summary {
            let _ = write!(
                card,
                "<div class=\"summary-text\"><div class=\"who\">Summary by {}</div><div class=\"md\">{}</div></div>",
                escape(&summary.by),
                markdown(&summary.text)
            );
        }
        card.push_str("</div>");
        card
    }

    /// What compaction number `n` does to the events of its range, counted: "12 events in
    /// the summary, 3 tool results stripped".
    fn stripped_in(&self, n: usize) -> Vec<String> {
        // Each what in the singular and the plural: the noun that takes the plural is not
        // always the first word ("2 tool results stripped").
        let mut counts: Vec<((String, String), u64)> = Vec::new();
        let mut add = |what: (String, String)| match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, k)) => *k += 1,
            None => counts.push((what, 1)),
        };
        let both = |one: &str, many: &str| (one.to_owned(), many.to_owned());
        for fate in self.fates() {
            match fate {
                Fate::Summarised(m) if m == n => add(both("event in the summary", "events in the summary")),
                Fate::Edited(edit, m) if m == n => add(edit_counted(edit)),
                Fate::ReasoningStripped(Some(m)) if m == n => {
                    add(both("reasoning event stripped", "reasoning events stripped"))
                }
                Fate::LeftOut(Some(m)) if m == n => add(both("tool event left out", "tool events left out")),
                _ => {}
            }
        }
        counts
            .into_iter()
            .map(|((one, many), k)| if k == 1 { format!("1 {one}") } else { format!("{} {many}", thousands(k)) })
            .collect()
    }

    fn raw(&self, s: &mut String, shown: bool, slice: &Slice) {
        let _ = writeln!(s, "<section class=\"view\" data-view=\"raw\" id=\"view-raw\"{}>", hidden(!shown));
        let fates = self.fates();
        let names = tool_names(self.events);
        let statuses = tool_statuses(self.events);
        let records = crate::compaction::records(self.events).unwrap_or_default();
        for (index, event) in self.events.iter().enumerate().take(slice.range.end).skip(slice.range.start) {
            if slice.link.is_some() {
                let _ = write!(s, "<span class=\"anchor\" id=\"e{index}\"></span>");
            }
            if event.starts_turn()
                && let Some(t) = self.turns[index]
            {
                self.turn_heading(s, "r", t);
            }
            if let Kind::Compaction = event.kind {
                let record = records.iter().find(|(e, _)| e.id == event.id).map(|(_, r)| r);
                self.compaction_marker(s, event, record);
                continue;
            }
            let covered = self.covering(index).next().is_some();
            let badge = fate_badge(&fates[index]);
            render_event(s, event, &names, &statuses, covered.then_some("covered"), badge.as_deref());
        }
        s.push_str("</section>\n");
    }

    /// Where a compaction event sits in the stream: which one it is (or what it revokes).
    fn compaction_marker(&self, s: &mut String, event: &Event, record: Option<&Record>) {
        let text = match (record, self.number(&event.id)) {
            (Some(Record::Revoke { target }), _) => match self.events.iter().position(|e| e.id == *target) {
                Some(at) => format!("Compaction undone: the one at event {at} no longer applies"),
                None => "Compaction undone".to_owned(),
            },
            (Some(Record::Apply(_)), Some(n)) => format!("Compaction #{n} made here (see the header)"),
            (Some(Record::Apply(c)), None) => format!("Compaction {} (not in force)", c.describe()),
            (None, _) => "Compaction (unreadable)".to_owned(),
        };
        let _ = writeln!(s, "<div class=\"marker\">{}</div>", escape(&text));
    }

    fn turn_heading(&self, s: &mut String, prefix: &str, t: u64) {
        let est = self.estimate.turns.iter().find(|e| e.turn == Some(t));
        let (before, after) = est.map_or((0, 0), |e| (e.before, e.after));
        let max = self.estimate.turns.iter().map(|e| e.before.max(e.after)).max().unwrap_or(0).max(1);
        let _ = writeln!(
            s,
            "<h2 class=\"turn\" id=\"{prefix}-t{t}\"><span>Turn {t}</span><span class=\"tt\">~{} → ~{} tokens\
             <span class=\"minibar\"><i class=\"raw\" style=\"width:{}%\"></i><i class=\"cmp\" style=\"width:{}%\"></i></span></span></h2>",
            thousands(before),
            thousands(after),
            percent(before, max),
            percent(after, max)
        );
    }

    fn compacted(&self, s: &mut String, shown: bool, slice: &Slice) {
        let _ = writeln!(s, "<section class=\"view\" data-view=\"compacted\" id=\"view-compacted\"{}>", hidden(!shown));
        let events: Vec<Event> = self.view.iter().map(|(_, p)| p.event.clone()).collect();
        let names = tool_names(&events);
        let statuses = tool_statuses(&events);
        let mut last_turn: Option<u64> = None;
        let mut last_raw = 0;
        for (at, (item, made)) in self.view.iter().enumerate() {
            if let Item::Raw { index, .. } = item {
                last_raw = *index;
            }
            if !slice.range.contains(&at) {
                if matches!(made.event.kind, Kind::User { .. }) && made.raw_turn.is_some() {
                    last_turn = made.raw_turn;
                }
                continue;
            }
            let by = match &made.origin {
                Origin::Synthetic { by: Some(by) } => self.number(by),
                _ => None,
            };
            // A turn opens at its user message, as `show --compacted` opens it: whatever else
            // the view holds stays under the turn shown before it.
            if matches!(made.event.kind, Kind::User { .. })
                && made.raw_turn != last_turn
                && let Some(t) = made.raw_turn
            {
                match by.and_then(|n| self.in_force.get(n - 1)) {
                    Some(c) => {
                        let range = match (c.first_turn, c.last_turn) {
                            (Some(a), Some(b)) if a != b => format!("Turns {a}–{b}"),
                            _ => format!("Turn {t}"),
                        };
                        let _ = writeln!(
                            s,
                            "<h2 class=\"turn\" id=\"c-t{t}\"><span>{range}</span><span class=\"tt\">summarised by compaction #{}</span></h2>",
                            by.unwrap_or(0)
                        );
                    }
                    None => self.turn_heading(s, "c", t),
                }
                last_turn = made.raw_turn;
            }
            let (class, badge) = match (&made.origin, item) {
                (Origin::Raw, _) => (None, None),
                (Origin::Rewritten { by }, Item::Raw { edit, .. }) => {
                    let n = self.number(by).unwrap_or(0);
                    (Some("edited"), Some(format!("<span class=\"badge edit\">{} · #{n}</span>", edit_noun(edit))))
                }
                (Origin::Rewritten { .. }, _) => (Some("edited"), None),
                (Origin::Synthetic { by: Some(_) }, _) => (
                    Some("synthetic"),
                    Some(format!("<span class=\"badge sum\">summary · #{}</span>", by.unwrap_or(0))),
                ),
                (Origin::Synthetic { by: None }, _) => (
                    Some("synthetic"),
                    Some("<span class=\"badge fill\">placeholder, keeps the view valid</span>".into()),
                ),
            };
            // What the entry stands for: a summary its range, an edited event itself, a
            // placeholder the event it follows.
            let stands_for = match (item, &made.origin) {
                (_, Origin::Raw) => None,
                (Item::Raw { index, .. }, _) => Some(*index),
                (_, Origin::Synthetic { by: Some(_) }) => by.and_then(|n| self.in_force.get(n - 1)).map(|c| c.start),
                _ => Some(last_raw),
            };
            let badge = match (stands_for, slice.link) {
                (Some(index), Some(link)) => Some(format!(
                    "{} <a class=\"goto\" href=\"{}\">raw event {index} →</a>",
                    badge.unwrap_or_default(),
                    escape(&link(index))
                )),
                _ => badge,
            };
            render_event(s, &made.event, &names, &statuses, class, badge.as_deref());
        }
        s.push_str("</section>\n");
    }
}

/// Which entries of a view to write, and (for `convo serve`) the address of raw event N.
pub struct Slice<'l> {
    pub range: std::ops::Range<usize>,
    pub link: Option<&'l dyn Fn(usize) -> String>,
}

impl Slice<'_> {
    fn whole(len: usize) -> Slice<'static> {
        Slice { range: 0..len, link: None }
    }
}

/// Content-Security-Policy: nothing loads from anywhere; only the page's own style and
/// script run (inline, so the page stays one file).
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// The toggle: the URL's `#raw` or `#compacted` (a link of the page sets it) picks the view;
/// without one the page stays on the view it was written with. `hidden` on the other
/// view and `data-view` on `<body>` say which is shown.
const SCRIPT: &str = "(function(){var b=document.body;\
function show(v){if(v!=='raw'&&v!=='compacted')return;b.setAttribute('data-view',v);\
document.querySelectorAll('section.view').forEach(function(s){s.hidden=s.getAttribute('data-view')!==v;});\
document.querySelectorAll('.toggle a').forEach(function(a){a.setAttribute('aria-selected',String(a.getAttribute('data-show')===v));});}\
function fromHash(){show(decodeURIComponent(location.hash.slice(1)));}\
window.addEventListener('hashchange',fromHash);fromHash();})();";

pub(crate) const STYLE: &str = r#"
:root{color-scheme:light dark;--bg:#f7f6f3;--fg:#1f2328;--muted:#6a6f76;--card:#fff;--line:#e2dfd8;--code:#f1efea;
--user:#0f7b55;--asst:#2f5fb3;--tool:#7a4fc2;--err:#c0392b;--ok:#1f7a3f;--cmp:#b7791f;--cmpbg:#fdf5e2;--raw:#cdd6e4;--bar:#2f5fb3;--sum:#8a5a00}
@media (prefers-color-scheme:dark){:root{--bg:#15171b;--fg:#e4e4e2;--muted:#9ba1a9;--card:#1d2026;--line:#2f343c;--code:#252a31;
--user:#5ed3a3;--asst:#8db5f7;--tool:#c2a5ff;--err:#ff8f84;--ok:#7bdc9c;--cmp:#efb75a;--cmpbg:#2a2416;--raw:#3b4452;--bar:#8db5f7;--sum:#f2c46d}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.65 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Noto Sans CJK JP","Noto Sans CJK KR","Source Han Sans SC","PingFang SC","Hiragino Sans","Hiragino Kaku Gothic ProN","Microsoft YaHei","Malgun Gothic","Noto Color Emoji","Apple Color Emoji","Segoe UI Emoji",sans-serif;
overflow-wrap:break-word}
pre{overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono","Noto Sans Mono CJK SC","DejaVu Sans Mono",monospace;font-size:.86em}
header.top,main,footer{max-width:52rem;margin:0 auto;padding:0 1.25rem}
header.top{padding-top:2rem}
h1{font-size:1.7rem;line-height:1.25;margin:0 0 .75rem;white-space:pre-wrap}
.facts{display:flex;flex-wrap:wrap;gap:.4rem 1.6rem;margin:0 0 1rem;font-size:.92rem}
.facts div{display:flex;gap:.4rem}.facts dt{color:var(--muted)}.facts dd{margin:0;font-weight:600}
.chart{margin:0 0 1rem;padding:.75rem .9rem .5rem;background:var(--card);border:1px solid var(--line);border-radius:10px}
.bars{display:flex;align-items:flex-end;gap:2px;height:72px}
.col{flex:1 1 0;min-width:2px;max-width:40px;height:100%;position:relative}
.col i,.minibar i{position:absolute;left:0;bottom:0;display:block;border-radius:2px 2px 0 0}
.col i{width:100%}.col i.raw{background:var(--raw)}.col i.cmp{background:var(--bar);width:60%;left:20%}
figcaption{display:flex;justify-content:space-between;color:var(--muted);font-size:.78rem;margin-top:.3rem}
.key i{display:inline-block;width:.7em;height:.7em;border-radius:2px;vertical-align:-.05em}
.key i.raw{background:var(--raw)}.key i.cmp{background:var(--bar)}
.compactions{list-style:none;padding:0;margin:0 0 1rem}
.compaction{background:var(--cmpbg);border:1px solid var(--line);border-left:4px solid var(--cmp);border-radius:8px;padding:.6rem .9rem;margin:.5rem 0;font-size:.92rem}
.stripped{color:var(--muted);margin-top:.2rem}
.summary-text{margin-top:.5rem}.summary-text .who{color:var(--sum)}
.toggle{position:sticky;top:0;z-index:2;display:flex;gap:.5rem;padding:.6rem 0;background:var(--bg);border-bottom:1px solid var(--line)}
.toggle a{flex:1;text-decoration:none;color:var(--fg);border:1px solid var(--line);border-radius:8px;padding:.45rem .8rem;background:var(--card);font-weight:600}
.toggle a small{display:block;font-weight:400;color:var(--muted);font-size:.78rem}
.toggle a[aria-selected=true]{border-color:var(--bar);box-shadow:inset 0 -3px 0 var(--bar)}
h2.turn{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;font-size:1rem;margin:2rem 0 .6rem;padding-top:.6rem;border-top:1px solid var(--line)}
.tt{color:var(--muted);font-weight:400;font-size:.8rem;display:flex;align-items:center;gap:.5rem}
.minibar{position:relative;display:inline-block;width:90px;height:7px;background:var(--code);border-radius:4px;overflow:hidden}
.minibar i{height:100%;border-radius:4px}.minibar i.raw{background:var(--raw)}.minibar i.cmp{background:var(--bar)}
.msg{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.55rem .95rem;margin:.6rem 0}
.msg.user{border-left:4px solid var(--user)}.msg.assistant{border-left:4px solid var(--asst)}.msg.system{border-left:4px solid var(--muted)}
.who{font-size:.74rem;font-weight:700;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
.user>.who{color:var(--user)}.assistant>.who{color:var(--asst)}
.md>:first-child{margin-top:.2rem}.md>:last-child{margin-bottom:.2rem}
.md pre,.fold pre,.args pre{background:var(--code);padding:.6rem .75rem;border-radius:6px;overflow-x:auto;white-space:pre-wrap}
.md code{background:var(--code);padding:.05em .3em;border-radius:4px}.md pre code{background:none;padding:0}
.md blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid var(--line);color:var(--muted)}
.md table{border-collapse:collapse}.md td,.md th{border:1px solid var(--line);padding:.2rem .5rem}
a{color:var(--asst)}
details.fold{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:.4rem 0;font-size:.93rem}
details.fold>summary{cursor:pointer;padding:.35rem .8rem;list-style-position:inside;display:list-item}
details.fold>summary .sub{color:var(--muted)}
details.fold>:not(summary){margin:0 .8rem .6rem}
details.fold.tool{border-left:4px solid var(--tool)}details.fold.reasoning{border-left:4px dotted var(--muted);font-style:normal}
details.fold.reasoning .md{color:var(--muted)}
.kind{font-weight:700;color:var(--tool)}.reasoning .kind{color:var(--muted)}
.status,.badge{white-space:nowrap}
.status{font-size:.75rem;font-weight:700;padding:0 .4em;border-radius:4px;border:1px solid currentColor}
.status.ok{color:var(--ok)}.status.error{color:var(--err)}
details.fold.error{border-left-color:var(--err)}
.args dt{color:var(--muted);font-size:.8rem}.args dd{margin:0 0 .3rem}
.covered{box-shadow:-9px 0 0 -6px var(--cmp)}
.badge{font-size:.72rem;font-weight:600;letter-spacing:0;text-transform:none;padding:.05em .45em;border-radius:4px;background:var(--cmpbg);color:var(--sum);border:1px solid var(--cmp)}
.synthetic{border-style:dashed}.synthetic.msg{background:var(--cmpbg)}
.marker,.meta{color:var(--muted);font-size:.82rem;margin:.4rem 0;padding-left:.2rem}
.marker{color:var(--sum);font-weight:600}
footer{color:var(--muted);font-size:.8rem;padding:2rem 1.25rem 3rem}
[hidden]{display:none!important}
"#;

/// The tool each call id calls, so a result can say which tool it came from.
fn tool_names(events: &[Event]) -> HashMap<&str, &str> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect()
}

/// Whether each call id's result was an error, so a call can say how it went.
fn tool_statuses(events: &[Event]) -> HashMap<&str, bool> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolResult { call_id, is_error, .. } => Some((call_id.as_str(), *is_error)),
            _ => None,
        })
        .collect()
}

fn edit_noun(edit: &Edit) -> String {
    match edit {
        Edit::None => "sent as it is".into(),
        Edit::EmptyArguments { .. } => "tool arguments stripped".into(),
        Edit::StatusLine { .. } => "tool result stripped".into(),
        Edit::Truncate { max_lines, .. } => format!("tool result truncated to {max_lines} lines"),
    }
}

/// [`edit_noun`] as it is counted, in the singular and the plural.
fn edit_counted(edit: &Edit) -> (String, String) {
    match edit {
        Edit::None => ("event sent as it is".into(), "events sent as they are".into()),
        Edit::EmptyArguments { .. } => {
            ("tool call's arguments stripped".into(), "tool calls' arguments stripped".into())
        }
        Edit::StatusLine { .. } => ("tool result stripped".into(), "tool results stripped".into()),
        Edit::Truncate { max_lines, .. } => (
            format!("tool result truncated to {max_lines} lines"),
            format!("tool results truncated to {max_lines} lines"),
        ),
    }
}

/// What the compacted view does with a raw event, as a badge; nothing when it is sent.
fn fate_badge(fate: &Fate) -> Option<String> {
    let by = |n: Option<usize>| n.map(|n| format!(" · #{n}")).unwrap_or_default();
    let text = match fate {
        Fate::Sent => return None,
        Fate::Edited(edit, n) => format!("{}{}", edit_noun(edit), by(Some(*n))),
        Fate::Summarised(n) => format!("in the summary{}", by(Some(*n))),
        Fate::ReasoningStripped(n) => format!("reasoning stripped{}", by(*n)),
        Fate::LeftOut(n) => format!("not sent{}", by(*n)),
    };
    Some(format!("<span class=\"badge\">{}</span>", escape(&text)))
}

/// One event as the page shows it; `class` marks it (covered by a compaction, edited or made
/// up by one) and `badge` says how.
fn render_event(
    s: &mut String,
    event: &Event,
    names: &HashMap<&str, &str>,
    statuses: &HashMap<&str, bool>,
    class: Option<&str>,
    badge: Option<&str>,
) {
    let class = class.map(|c| format!(" {c}")).unwrap_or_default();
    let badge = badge.unwrap_or("");
    let message = |s: &mut String, role: &str, label: &str, content: &str| {
        let _ = writeln!(
            s,
            "<article class=\"msg {role}{class}\"><div class=\"who\">{label}{badge}</div><div class=\"md\">{}</div></article>",
            markdown(content)
        );
    };
    match &event.kind {
        Kind::User { content } => message(s, "user", "User", content),
        Kind::Assistant { content } => message(s, "assistant", "Assistant", content),
        Kind::System { content } => {
            let _ = writeln!(
                s,
                "<details class=\"fold msg system{class}\"><summary><span class=\"kind\">System</span> \
                 <span class=\"sub\">· {}</span>{badge}</summary><div class=\"md\">{}</div></details>",
                size(content),
                markdown(content)
            );
        }
        Kind::Reasoning { content } => {
            let _ = writeln!(
                s,
                "<details class=\"fold reasoning{class}\"><summary><span class=\"kind\">Reasoning</span> \
                 <span class=\"sub\">· {}</span> {badge}</summary><div class=\"md\">{}</div></details>",
                size(content),
                markdown(content)
            );
        }
        Kind::ToolCall { call_id, name, arguments } => {
            let status = match statuses.get(call_id.as_str()) {
                Some(true) => "<span class=\"status error\">error</span>",
                Some(false) => "<span class=\"status ok\">ok</span>",
                None => "<span class=\"status\">no result</span>",
            };
            let shown = arguments.to_string();
            let _ = writeln!(
                s,
                "<details class=\"fold tool call{class}\"><summary><span class=\"kind\">Tool call</span> <code>{}</code> \
                 <span class=\"sub\">· {} · {}</span> {status} {badge}</summary>{}</details>",
                escape(name),
                escape(&preview(arguments)),
                bytes(shown.len()),
                arguments_html(arguments)
            );
        }
        Kind::ToolResult { call_id, content, is_error } => {
            let name = names.get(call_id.as_str()).copied().unwrap_or("unknown tool");
            let (status, err) = if *is_error {
                ("<span class=\"status error\">error</span>", " error")
            } else {
                ("<span class=\"status ok\">ok</span>", "")
            };
            let _ = writeln!(
                s,
                "<details class=\"fold tool result{err}{class}\"><summary><span class=\"kind\">Result</span> <code>{}</code> \
                 <span class=\"sub\">· {}</span> {status} {badge}</summary><pre>{}</pre></details>",
                escape(name),
                size(content),
                escape(content)
            );
        }
        Kind::Config { set } => {
            let _ = writeln!(
                s,
                "<div class=\"meta{class}\">config: {}</div>",
                escape(&serde_json::Value::Object(set.clone()).to_string())
            );
        }
        Kind::Compaction => {}
        Kind::Other(kind) => {
            let _ = writeln!(s, "<div class=\"meta{class}\">event of type <code>{}</code></div>", escape(kind));
        }
    }
}

/// A call's arguments: an object of plain values as one labelled block per field (a
/// command or a file's text reads as it is, not as an escaped JSON string), else JSON.
fn arguments_html(arguments: &serde_json::Value) -> String {
    use serde_json::Value;
    match arguments {
        Value::Object(map) if !map.is_empty() && map.values().all(|v| !v.is_object() && !v.is_array()) => {
            let mut out = String::from("<dl class=\"args\">");
            for (key, value) in map {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let _ = write!(out, "<dt>{}</dt><dd><pre>{}</pre></dd>", escape(key), escape(&text));
            }
            out + "</dl>"
        }
        other => format!("<pre>{}</pre>", escape(&serde_json::to_string_pretty(other).unwrap_or_default())),
    }
}

/// A call's arguments on one short line for its folded summary: the first string field's
/// first line (usually the command or path), else compact JSON, cut at 80 characters.
fn preview(arguments: &serde_json::Value) -> String {
    let text = arguments
        .as_object()
        .and_then(|m| m.values().find_map(serde_json::Value::as_str))
        .map(|s| s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned())
        .unwrap_or_else(|| arguments.to_string());
    let mut chars = text.chars();
    let cut: String = chars.by_ref().take(80).collect();
    if chars.next().is_some() { format!("{cut}…") } else { cut }
}

fn size(text: &str) -> String {
    if text.is_empty() {
        return "empty".into();
    }
    let lines = text.lines().count().max(1);
    format!("{lines} line{} · {}", if lines == 1 { "" } else { "s" }, bytes(text.len()))
}

fn bytes(n: usize) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}

pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn saving(before: u64, after: u64) -> String {
    if before == 0 || after >= before {
        return String::new();
    }
    format!(" <span class=\"sub\">(−{}%)</span>", (before - after) * 100 / before)
}

/// `part` of `whole` as a CSS percentage; a part that is not zero stays visible.
fn percent(part: u64, whole: u64) -> String {
    if part == 0 {
        return "0".into();
    }
    format!("{:.1}", (part as f64 * 100.0 / whole as f64).max(2.0))
}

fn hidden(hide: bool) -> &'static str {
    if hide { " hidden" } else { "" }
}

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a link may stay a link: only to the web or to mail. Anything else (a script URL,
/// a file, a fragment that would steer the page's own toggle) becomes text.
fn linkable(link_type: LinkType, url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    link_type == LinkType::Email
        || lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("mailto:")
}

/// Stored text as Markdown, made inert: raw HTML is shown as the text it is (a block of it
/// as code), links other than http(s) and mailto become their text and URL, an image its
/// alt text and URL (so nothing is fetched), and headings start below the page's own.
pub(crate) fn markdown(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out: Vec<Md> = Vec::new();
    // For each open link, the URL to print after its text when it is not kept as a link.
    let mut links: Vec<Option<String>> = Vec::new();
    // Inside an image: its URL, its alt text so far, and how many images deep.
    let mut image: Option<(String, String, usize)> = None;
    for event in Parser::new_ext(text, options) {
        if let Some((url, alt, depth)) = &mut image {
            match event {
                Md::Start(Tag::Image { .. }) => *depth += 1,
                Md::End(TagEnd::Image) if *depth > 0 => *depth -= 1,
                Md::End(TagEnd::Image) => {
                    let shown = format!("[image: {alt}] {url}");
                    out.push(Md::Text(CowStr::from(shown.trim_end().to_owned())));
                    image = None;
                }
                Md::Text(t) | Md::Code(t) => alt.push_str(&t),
                _ => {}
            }
            continue;
        }
        match event {
            Md::Html(html) | Md::InlineHtml(html) => out.push(Md::Text(html)),
            Md::Start(Tag::HtmlBlock) => out.push(Md::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Indented))),
            Md::End(TagEnd::HtmlBlock) => out.push(Md::End(TagEnd::CodeBlock)),
            Md::Start(Tag::Image { dest_url, .. }) => image = Some((dest_url.into_string(), String::new(), 0)),
            Md::Start(Tag::Link { link_type, dest_url, title, id }) => {
                if linkable(link_type, &dest_url) {
                    links.push(None);
                    out.push(Md::Start(Tag::Link { link_type, dest_url, title, id }));
                } else {
                    links.push(Some(dest_url.into_string()));
                }
            }
            Md::End(TagEnd::Link) => match links.pop().flatten() {
                None => out.push(Md::End(TagEnd::Link)),
                Some(url) if url.is_empty() => {}
                Some(url) => out.push(Md::Text(CowStr::from(format!(" ({url})")))),
            },
            Md::Start(Tag::Heading { level, id, classes, attrs }) => {
                out.push(Md::Start(Tag::Heading { level: lower(level), id, classes, attrs }))
            }
            Md::End(TagEnd::Heading(level)) => out.push(Md::End(TagEnd::Heading(lower(level)))),
            other => out.push(other),
        }
    }
    let mut html = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut html, out.into_iter());
    html
}

/// A message's heading two levels down (h1 → h3), under the page's title and turn headings.
fn lower(level: HeadingLevel) -> HeadingLevel {
    match level {
        HeadingLevel::H1 => HeadingLevel::H3,
        HeadingLevel::H2 => HeadingLevel::H4,
        HeadingLevel::H3 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_formatting_and_makes_html_text() {
        assert_eq!(markdown("**b** `c` <b>x</b>"), "<p><strong>b</strong> <code>c</code> &lt;b&gt;x&lt;/b&gt;</p>\n");
        assert_eq!(
            markdown("<script>alert(1)</script>"),
            "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>\n"
        );
        assert_eq!(markdown("# Title"), "<h3>Title</h3>\n");
    }

    #[test]
    fn only_web_and_mail_links_stay_links_and_images_become_text() {
        assert_eq!(markdown("[a](https://x.example/)"), "<p><a href=\"https://x.example/\">a</a></p>\n");
        assert_eq!(markdown("<me@x.example>"), "<p><a href=\"mailto:me@x.example\">me@x.example</a></p>\n");
        assert_eq!(markdown("[a](javascript:alert(1))"), "<p>a (javascript:alert(1))</p>\n");
        assert_eq!(markdown("[a](#compacted)"), "<p>a (#compacted)</p>\n");
        assert_eq!(markdown("![a *b*](http://x.example/i.png)"), "<p>[image: a b] http://x.example/i.png</p>\n");
    }

    #[test]
    fn sizes_and_counts_read_as_people_say_them() {
        assert_eq!(size(""), "empty");
        assert_eq!(size("a\nb"), "2 lines · 3 B");
        assert_eq!(bytes(2048), "2.0 KB");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(percent(0, 10), "0");
        assert_eq!(percent(1, 1000), "2.0");
    }
}

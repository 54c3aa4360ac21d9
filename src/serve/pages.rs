//! The pages: the conversations list, search (as you type, through `/api/search`), one
//! conversation a page of events at a time (raw or compacted, its compactions as cards, its
//! history and where it went), its `diff --compacted`, and usage. Each is a function from
//! the store and the query string to a [`Response`]; stored text reaches HTML only through
//! the export's `escape` and `markdown`.

use std::collections::HashMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::{Response, Site};
use crate::event::who::Who;
use crate::interop::html::{self, Page, Slice, Start, escape, thousands};
use crate::ops::search::{self, Filter, Mode, Pattern};
use crate::ops::usage::{self, By, Options};
use crate::ops::{OpsError, project};
use crate::render::{self, ShortIds, Theme};
use crate::store::{Store, Summary};

/// Conversations on a page of the list.
const ROWS: usize = 100;
/// Entries of a view on a page of a conversation: a 5,000-event conversation opens as fast
/// as a 400-event one.
pub const EVENTS: usize = 400;
/// Search hits sent for one query, and from one conversation.
const HITS: usize = 50;
const HITS_EACH: usize = 3;
/// The characters of a hit's line shown around its first match.
const AROUND: usize = 160;

const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");
const PLAIN: Theme = Theme { color: false };

/// The query string, decoded.
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn parse(query: &str) -> Params {
        Params(
            query
                .split('&')
                .filter(|kv| !kv.is_empty())
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    fn page(&self) -> usize {
        self.get("page").and_then(|p| p.parse().ok()).unwrap_or(0)
    }
}

/// `%XX` and `+` decoded; bytes that are not UTF-8 replaced.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` as a URL's path segment or query value: everything but unreserved characters
/// percent-encoded.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

pub fn route(store: &Store, site: &Site, path: &str, params: &Params) -> Response {
    let result = match path {
        "/" => list(store, site, params),
        "/search" => search_page(store, site, params),
        "/api/search" => search_api(store, site, params),
        "/usage" => usage_page(store, site),
        "/assets/app.js" => {
            return Response::of(200, "text/javascript; charset=utf-8", SCRIPT.as_bytes().to_vec());
        }
        "/assets/style.css" => {
            let css = format!("{}\n{STYLE}", html::STYLE);
            return Response::of(200, "text/css; charset=utf-8", css.into_bytes());
        }
        _ => match path.strip_prefix("/c/") {
            Some(rest) => {
                let (query, page) = rest.split_once('/').map_or((rest, None), |(id, page)| (id, Some(page)));
                let query = decode(query);
                if let Err(refused) = fetched(store, site, &query) {
                    return refused;
                }
                match page {
                    None => conversation(store, &query, params),
                    Some("diff") => diff(store, &query),
                    Some(_) => Ok(None),
                }
            }
            None => Ok(None),
        },
    };
    match result {
        Ok(Some(response)) => response,
        Ok(None) => Response::html(layout("Not found", "", "<h1>Not found</h1><p>Nothing here.</p>")).status(404),
        Err(e) => {
            let body = format!("<h1>Something went wrong</h1><pre>{}</pre>", escape(&with_causes(&e)));
            Response::html(layout("Error", "", &body)).status(500)
        }
    }
}

/// An error and its causes, on one line.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut why = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let _ = write!(why, ": {c}");
        cause = c.source();
    }
    why.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// In a lazy store, fetch the conversation `query` names before its page is made, as
/// `show` does (`ops::lazy::ensure`), one fetch at a time. A fetch that fails is a 502 page
/// saying why in one line; the store is as it was.
fn fetched(store: &Store, site: &Site, query: &str) -> Result<(), Response> {
    // A whole store, or a conversation already here, takes no lock.
    let fetch = || {
        if crate::ops::lazy::missing(store, Some(query))?.is_none() {
            return Ok(None);
        }
        let _one = site.fetching.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The commit's time: the clock the CLI handed in, read now.
        let clock = crate::clock::Clock::fixed((site.now)());
        crate::ops::lazy::ensure(store, Some(query), &clock, &mut |_| {})
    };
    match fetch() {
        Ok(_) => Ok(()),
        Err(e) => {
            let body = format!(
                "<h1>Could not fetch the conversation</h1><p>This store is a lazy clone: the conversation is \
                 fetched from its hub when first opened, and that failed.</p><pre>{}</pre>",
                escape(&with_causes(&e))
            );
            Err(Response::html(layout("Could not fetch", "", &body)).status(502))
        }
    }
}

impl Response {
    fn status(mut self, status: u16) -> Response {
        self.status = status;
        self
    }
}

type Page_ = Result<Option<Response>, OpsError>;

/// The frame of every page: the site's navigation, its stylesheet and script (from this
/// server: the CSP allows nothing else).
fn layout(title: &str, current: &str, body: &str) -> String {
    let nav = [("/", "Conversations"), ("/search", "Search"), ("/usage", "Usage")]
        .iter()
        .map(|(href, name)| {
            let here = if *href == current { " aria-current=\"page\"" } else { "" };
            format!("<a href=\"{href}\"{here}>{name}</a>")
        })
        .collect::<String>();
    // Links out of stored Markdown open without a hold on this page (`noopener`) and
    // without telling where they came from. Text is escaped, so `<a href="` is markup.
    let body = body.replace("<a href=\"http", "<a rel=\"noopener noreferrer\" target=\"_blank\" href=\"http");
    let body = body.replace("<a href=\"mailto:", "<a rel=\"noopener noreferrer\" href=\"mailto:");
    let body = visible(&body);
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<title>{} · convo</title>\n\
         <link rel=\"stylesheet\" href=\"/assets/style.css\">\n<script src=\"/assets/app.js\" defer></script>\n\
         </head>\n<body class=\"serve\">\n<nav class=\"site\"><b>convo</b>{nav}</nav>\n<div class=\"page\">\n{body}\n</div>\n</body></html>\n",
        escape(title)
    )
}

/// Control characters (a terminal's escapes, a bell) as the symbols that picture them
/// (`␛`): inert in a page either way, but seen, not silently dropped or misread.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' | '\r' => c,
            c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or(c),
            '\u{7f}' => '␡',
            c => c,
        })
        .collect()
}

fn when(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    search::parse_when(text, now).ok()
}

fn time_of(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&Utc))
}

impl Site {
    /// The people and agents of conversation `s`, read from its events once per update.
    fn who_of(&self, store: &Store, s: &Summary) -> Result<Who, OpsError> {
        let key = format!("{} {}", s.updated, s.stats.events);
        if let Some((at, who)) = self.who.lock().ok().and_then(|w| w.get(&s.id).cloned())
            && at == key
        {
            return Ok(who);
        }
        let who = Who::of(&store.events(&s.id)?);
        if let Ok(mut cache) = self.who.lock() {
            cache.insert(s.id.clone(), (key, who.clone()));
        }
        Ok(who)
    }
}

fn short(ids: &ShortIds, id: &str) -> String {
    escape(&ids.short(id, PLAIN))
}

fn title_of(s: &Summary) -> &str {
    s.title.as_deref().unwrap_or("(untitled)")
}

/// The list: every conversation (the catalogue), filtered, sorted, a page at a time,
/// forks and subagents under the one they came from.
fn list(store: &Store, site: &Site, p: &Params) -> Page_ {
    // In a lazy store, the catalog's conversations too: a page fetches one when opened.
    let all = crate::ops::lazy::summaries(store)?;
    let ids = ShortIds::new(all.iter().map(|s| s.id.clone()));
    let projects = project::names(&all);
    let mut known: Vec<&str> = projects.values().flatten().map(String::as_str).collect();
    known.sort_unstable();
    known.dedup();
    let total = all.len();
    let mut rows = all.clone();
    if p.get("here").is_some()
        && let Some(scope) = &site.here
    {
        rows = project::within(rows, scope);
    }
    if let Some(name) = p.get("project") {
        rows.retain(|s| projects.get(&s.id).cloned().flatten().as_deref() == Some(name));
    }
    if let Some(q) = p.get("q") {
        let q = q.to_lowercase();
        rows.retain(|s| s.id.starts_with(&q) || title_of(s).to_lowercase().contains(&q));
    }
    let now = (site.now)();
    if let Some(since) = p.get("since").and_then(|t| when(t, now)) {
        rows.retain(|s| time_of(&s.updated).is_some_and(|t| t >= since));
    }
    if let Some(until) = p.get("until").and_then(|t| when(t, now)) {
        rows.retain(|s| time_of(&s.updated).is_some_and(|t| t < until));
    }
    // Agent and person are in the events: these filters read every conversation (once;
    // the server keeps what it read).
    for (key, people) in [("agent", false), ("person", true)] {
        if let Some(want) = p.get(key) {
            let want = want.to_lowercase();
            let mut kept = Vec::new();
            for s in rows {
                let who = site.who_of(store, &s)?;
                let names = if people { &who.people } else { &who.agents };
                if names.iter().any(|n| n.to_lowercase().contains(&want)) {
                    kept.push(s);
                }
            }
            rows = kept;
        }
    }
    let sort = p.get("sort").unwrap_or("updated");
    match sort {
        "title" => rows.sort_by_key(|s| title_of(s).to_lowercase()),
        "created" => rows.sort_by(|a, b| b.created.cmp(&a.created)),
        "turns" => rows.sort_by_key(|s| std::cmp::Reverse(s.stats.turns)),
        "tokens" => rows.sort_by_key(|s| std::cmp::Reverse(s.tokens)),
        _ => rows.sort_by(|a, b| b.updated.cmp(&a.updated)),
    }
    let order = render::family_order(&rows);
    let pages = order.len().div_ceil(ROWS).max(1);
    let page = p.page().min(pages - 1);
    let mut s = String::new();
    let _ = write!(s, "<h1>Conversations</h1>\n<form class=\"filters\" method=\"get\" action=\"/\">");
    let value = |k: &str| escape(p.get(k).unwrap_or(""));
    let _ = write!(
        s,
        "<label>Title or id <input name=\"q\" value=\"{}\"></label>\
         <label>Project <select name=\"project\"><option value=\"\">any</option>",
        value("q")
    );
    for name in &known {
        let selected = if p.get("project") == Some(name) { " selected" } else { "" };
        let _ = write!(s, "<option{selected}>{}</option>", escape(name));
    }
    s.push_str("</select></label>");
    let _ = write!(
        s,
        "<label>Agent <input name=\"agent\" value=\"{}\" placeholder=\"claude-code\"></label>\
         <label>Person <input name=\"person\" value=\"{}\" placeholder=\"name or email\"></label>\
         <label>Updated since <input name=\"since\" value=\"{}\" placeholder=\"2026-01-01 or 7d\"></label>",
        value("agent"),
        value("person"),
        value("since")
    );
    if site.here.is_some() {
        let checked = if p.get("here").is_some() { " checked" } else { "" };
        let _ =
            write!(s, "<label><input type=\"checkbox\" name=\"here\" value=\"1\"{checked}> this repository</label>");
    }
    s.push_str("<label>Sort <select name=\"sort\">");
    for (key, name) in
        [("updated", "updated"), ("created", "created"), ("title", "title"), ("turns", "turns"), ("tokens", "tokens")]
    {
        let selected = if key == sort { " selected" } else { "" };
        let _ = write!(s, "<option value=\"{key}\"{selected}>{name}</option>");
    }
    s.push_str("</select></label><button>Filter</button></form>\n");
    let _ = writeln!(
        s,
        "<p class=\"count\" id=\"count\">{} of {} conversations</p>",
        thousands(rows.len() as u64),
        thousands(total as u64)
    );
    s.push_str(
        "<table class=\"list\"><thead><tr><th>Id</th><th>Title</th><th>Project</th><th>Agents</th><th>People</th>\
         <th class=\"n\">Turns</th><th class=\"n\">Tokens</th><th>Updated</th></tr></thead><tbody>\n",
    );
    for &(i, depth) in order.iter().skip(page * ROWS).take(ROWS) {
        let c = &rows[i];
        let who = site.who_of(store, c)?;
        // Words, not the terminal's `⑂`: a browser's fonts may not have it.
        let marker = match depth {
            0 => "",
            _ if c.subagent_of.is_some() => "└ <span class=\"tag\">subagent</span> ",
            _ => "└ <span class=\"tag\">fork</span> ",
        };
        let kind = match depth {
            0 => "",
            _ if c.subagent_of.is_some() => " class=\"sub subagent\"",
            _ => " class=\"sub fork\"",
        };
        let _ = writeln!(
            s,
            "<tr{kind}><td><code>{}</code></td><td style=\"padding-left:{}em\">{marker}<a href=\"/c/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">~{}</td><td>{}</td></tr>",
            short(&ids, &c.id),
            depth as f32 * 1.2 + 0.4,
            encode(&c.id),
            escape(title_of(c)),
            escape(projects.get(&c.id).cloned().flatten().as_deref().unwrap_or("")),
            escape(&who.agents.join(", ")),
            escape(&who.people.join(", ")),
            c.stats.turns,
            thousands(c.tokens),
            escape(&c.updated.get(..16).unwrap_or(&c.updated).replace('T', " ")),
        );
    }
    s.push_str("</tbody></table>\n");
    s.push_str(&pager(page, pages, |n| {
        let mut q: Vec<String> =
            p.0.iter().filter(|(k, _)| k != "page").map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
        q.push(format!("page={n}"));
        format!("/?{}", q.join("&"))
    }));
    Ok(Some(Response::html(layout("Conversations", "/", &s))))
}

fn pager(page: usize, pages: usize, href: impl Fn(usize) -> String) -> String {
    if pages <= 1 {
        return String::new();
    }
    let mut s = String::from("<nav class=\"pager\">");
    if page > 0 {
        let _ = write!(s, "<a rel=\"prev\" href=\"{}\">← previous</a>", escape(&href(page - 1)));
    }
    let _ = write!(s, "<span>page {} of {pages}</span>", page + 1);
    if page + 1 < pages {
        let _ = write!(s, "<a rel=\"next\" href=\"{}\">next →</a>", escape(&href(page + 1)));
    }
    s.push_str("</nav>\n");
    s
}

/// One search hit as the page and the script show it.
#[derive(serde::Serialize)]
struct Shown {
    href: String,
    title: String,
    short: String,
    #[serde(rename = "where")]
    place: String,
    /// The line around the match, in pieces: `(text, is a match)`.
    parts: Vec<(String, bool)>,
}

/// The grep engine over every conversation, newest first, a few hits from each, until
/// [`HITS`]; `more`: it stopped there.
fn hits(store: &Store, site: &Site, q: &str) -> Result<(Vec<Shown>, bool), OpsError> {
    if q.trim().is_empty() {
        return Ok((Vec::new(), false));
    }
    let Ok(pattern) = Pattern::new(q, true, true, false) else { return Ok((Vec::new(), false)) };
    let mut all = store.summaries()?;
    all.sort_by(|a, b| b.updated.cmp(&a.updated));
    let ids = ShortIds::new(all.iter().map(|s| s.id.clone()));
    let order: Vec<String> = all.iter().map(|s| s.id.clone()).collect();
    let mut shown = Vec::new();
    let mut more = false;
    search::search_all(&site.root, &order, &pattern, &Filter::default(), Mode::Hits(HITS_EACH), &mut |n, found| {
        let s = &all[n];
        for hit in found.hits {
            if shown.len() == HITS {
                more = true;
                return Ok(false);
            }
            let place = match hit.turn {
                Some(t) => format!("turn {t} · {}", hit.kind),
                None => hit.kind.clone(),
            };
            shown.push(Shown {
                href: format!("/c/{}?at={}", encode(&s.id), encode(&hit.event)),
                title: title_of(s).to_owned(),
                short: ids.short(&s.id, PLAIN),
                place,
                parts: pieces(&hit.line, &hit.matches).into_iter().map(|(t, m)| (visible(&t), m)).collect(),
            });
        }
        Ok(true)
    })?;
    Ok((shown, more))
}

/// `line` cut to [`AROUND`] characters either side of its first match, in pieces.
fn pieces(line: &str, matches: &[(usize, usize)]) -> Vec<(String, bool)> {
    let first = matches.first().map_or(0, |m| m.0);
    let floor = |mut at: usize| {
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let start = floor(line[..first].char_indices().rev().nth(AROUND).map_or(0, |(i, _)| i));
    let end = floor(line[first..].char_indices().nth(AROUND * 2).map_or(line.len(), |(i, _)| first + i));
    let mut parts = Vec::new();
    if start > 0 {
        parts.push(("…".to_owned(), false));
    }
    let mut at = start;
    for &(a, b) in matches {
        let (a, b) = (floor(a.max(at).min(end)), floor(b.max(at).min(end)));
        if a > at {
            parts.push((line[at..a].to_owned(), false));
        }
        if b > a {
            parts.push((line[a..b].to_owned(), true));
        }
        at = at.max(b);
    }
    if end > at {
        parts.push((line[at..end].to_owned(), false));
    }
    if end < line.len() {
        parts.push(("…".to_owned(), false));
    }
    parts
}

fn hits_html(hits: &[Shown], more: bool, q: &str) -> String {
    let mut s = String::new();
    for h in hits {
        let line: String =
            h.parts.iter().map(|(t, m)| if *m { format!("<mark>{}</mark>", escape(t)) } else { escape(t) }).collect();
        let _ = writeln!(
            s,
            "<li><a href=\"{}\">{}</a> <span class=\"where\">{} · {}</span><div class=\"line\">{line}</div></li>",
            escape(&h.href),
            escape(&h.title),
            escape(&h.short),
            escape(&h.place)
        );
    }
    let status = match (hits.len(), more) {
        (0, _) if q.trim().is_empty() => String::new(),
        (0, _) => "no hits".to_owned(),
        (n, false) => format!("{n} hits"),
        (n, true) => format!("the first {n} hits: add words to narrow it"),
    };
    format!("<p id=\"status\" aria-live=\"polite\">{status}</p><ol id=\"results\" class=\"hits\">{s}</ol>")
}

fn search_page(store: &Store, site: &Site, p: &Params) -> Page_ {
    let q = p.get("q").unwrap_or("");
    let (found, more) = hits(store, site, q)?;
    let body = format!(
        "<h1>Search</h1><form method=\"get\" action=\"/search\" class=\"search\"><input id=\"q\" name=\"q\" value=\"{}\" \
         placeholder=\"text in any message, tool call or result\" autofocus autocomplete=\"off\"></form>{}",
        escape(q),
        hits_html(&found, more, q)
    );
    Ok(Some(Response::html(layout("Search", "/search", &body))))
}

fn search_api(store: &Store, site: &Site, p: &Params) -> Page_ {
    let (found, more) = hits(store, site, p.get("q").unwrap_or(""))?;
    let json = serde_json::json!({ "hits": found, "more": more });
    Ok(Some(Response::of(200, "application/json", json.to_string().into_bytes())))
}

/// One conversation: its header (facts, token bars, compaction cards), where it came from
/// and went, a page of one view, and its history.
fn conversation(store: &Store, query: &str, p: &Params) -> Page_ {
    let Ok(id) = store.resolve(query) else { return Ok(None) };
    let events = store.events(&id)?;
    let all = store.summaries()?;
    let ids = ShortIds::new(all.iter().map(|s| s.id.clone()));
    let Some(me) = all.iter().find(|s| s.id == id) else { return Ok(None) };
    let title = title_of(me);
    let page = Page::new(title, &events)?;
    let href = encode(&id);
    if let Some(at) = p.get("at") {
        let index = page.index_of(at).unwrap_or(0);
        return Ok(Some(Response::redirect(format!("/c/{href}?view=raw&page={}#e{index}", index / EVENTS))));
    }
    let view = if p.get("view") == Some("compacted") { Start::Compacted } else { Start::Raw };
    let len = page.len(view);
    let pages = len.div_ceil(EVENTS).max(1);
    let n = p.page().min(pages - 1);
    let link = |index: usize| format!("/c/{href}?view=raw&page={}#e{index}", index / EVENTS);
    let who = Who::of(&events);
    let projects = project::names(&all);
    let mut s = String::new();
    let _ = write!(
        s,
        "<p class=\"crumbs\"><code>{}</code>{}{} · <a href=\"#where\">where it went</a></p>",
        short(&ids, &id),
        projects.get(&id).cloned().flatten().map(|p| format!(" · {}", escape(&p))).unwrap_or_default(),
        if who.is_empty() { String::new() } else { format!(" · {}", escape(&who.label())) }
    );
    s.push_str(&page.header_html());
    let name = |v: Start| if v == Start::Raw { "raw" } else { "compacted" };
    let _ = write!(s, "<nav class=\"toggle\" aria-label=\"view\">");
    for (v, label, sub) in [
        (Start::Raw, "Raw events", "everything stored"),
        (Start::Compacted, "Compacted view", "what the model is sent"),
    ] {
        let _ = write!(
            s,
            "<a href=\"/c/{href}?view={}\" data-show=\"{}\" aria-selected=\"{}\">{label} <small>{sub}</small></a>",
            name(v),
            name(v),
            v == view
        );
    }
    let _ = writeln!(s, "<a href=\"/c/{href}/diff\">diff --compacted</a></nav>");
    let range = n * EVENTS..((n + 1) * EVENTS).min(len);
    let what = if view == Start::Raw { "events" } else { "entries of the view" };
    let _ = writeln!(s, "<p class=\"count\">{what} {}–{} of {}</p>", range.start, range.end.saturating_sub(1), len);
    let pages_nav = pager(n, pages, |k| format!("/c/{href}?view={}&page={k}", name(view)));
    s.push_str(&pages_nav);
    let _ = write!(s, "<div class=\"events\" data-view=\"{}\">", name(view));
    s.push_str(&page.view_html(view, &Slice { range, link: Some(&link) }));
    s.push_str("</div>");
    s.push_str(&pages_nav);
    s.push_str(&relations(store, me, &all, &ids)?);
    Ok(Some(Response::html(layout(title, "", &s))))
}

/// Where the conversation came from and went: its source, its forks and subagents, and
/// its history (`convo log`: imports, appends, compactions, pulls, resumes), newest first.
fn relations(store: &Store, me: &Summary, all: &[Summary], ids: &ShortIds) -> Result<String, OpsError> {
    let by_id: HashMap<&str, &Summary> = all.iter().map(|s| (s.id.as_str(), s)).collect();
    let link = |s: &Summary| {
        format!("<a href=\"/c/{}\">{}</a> <code>{}</code>", encode(&s.id), escape(title_of(s)), short(ids, &s.id))
    };
    let mut timeline: Vec<(String, String)> = Vec::new();
    let mut s = String::from("<section class=\"where\" id=\"where\"><h2>Where it went</h2>");
    if let Some(parent) = me.came_from().and_then(|p| by_id.get(p)) {
        let how = if me.subagent_of.is_some() { "A subagent's work in" } else { "Forked from" };
        let _ = write!(s, "<p class=\"from\">{how} {}</p>", link(parent));
    }
    for child in all.iter().filter(|c| c.came_from() == Some(me.id.as_str())) {
        let how = if child.subagent_of.is_some() { "subagent" } else { "forked into" };
        timeline.push((child.created.clone(), format!("{how} {}", link(child))));
    }
    let mut entries = store.log(&me.id, Some(200))?;
    let whole = entries.len() < 200;
    crate::ops::who::attribute(store, &me.id, &mut entries, whole)?;
    for e in &entries {
        let by = if e.who.is_empty() { escape(&e.author) } else { escape(&e.who.label()) };
        let counts = match (e.turns, e.events) {
            (Some(t), Some(n)) => {
                format!(" <span class=\"sub\">· {}, {}</span>", render::plural(t, "turn"), render::plural(n, "event"))
            }
            _ => String::new(),
        };
        timeline.push((
            e.date.clone(),
            format!(
                "{} <span class=\"sub\">· {by} · <code>{}</code></span>{counts}",
                escape(&e.subject),
                escape(e.commit.get(..8).unwrap_or(&e.commit))
            ),
        ));
    }
    timeline.sort_by(|a, b| b.0.cmp(&a.0));
    s.push_str("<ol class=\"timeline\">");
    for (date, what) in &timeline {
        let _ = write!(s, "<li><time>{}</time> {what}</li>", escape(&date.get(..16).unwrap_or(date).replace('T', " ")));
    }
    s.push_str("</ol></section>\n");
    Ok(s)
}

/// `convo diff --compacted`, its lines coloured by what they are.
fn diff(store: &Store, query: &str) -> Page_ {
    let Ok(id) = store.resolve(query) else { return Ok(None) };
    let events = store.events(&id)?;
    let (before, after) = (crate::projection::raw_view(&events), crate::projection::project(&events)?);
    let mut out = Vec::new();
    // Into memory: it cannot fail.
    let _ = render::compare::unified(&mut out, &id, &before, &after, ("raw", "compacted"), PLAIN);
    let text = String::from_utf8_lossy(&out);
    let mut s = format!(
        "<h1>diff --compacted</h1><p><a href=\"/c/{}\">back to the conversation</a></p><pre class=\"diff\">",
        encode(&id)
    );
    for line in text.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "add",
            Some(b'-') if !line.starts_with("---") => "del",
            Some(b'@') => "hunk",
            _ => "ctx",
        };
        let _ = writeln!(s, "<span class=\"{class}\">{}</span>", escape(line));
    }
    s.push_str("</pre>");
    Ok(Some(Response::html(layout("diff --compacted", "", &s))))
}

fn sum(u: &crate::event::Usage) -> u64 {
    [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens].iter().flatten().sum()
}

fn cost(c: Option<f64>) -> String {
    c.map_or("–".to_owned(), |c| format!("${c:.2}"))
}

/// Usage: tokens and cost by day as a chart (SVG made here), and tables by model, project,
/// person and agent.
fn usage_page(store: &Store, site: &Site) -> Page_ {
    let all = store.summaries()?;
    let report = |by: By| usage::report(store, &all, &Options { by: vec![by], ..Options::default() }, &site.prices);
    let days = report(By::Day)?;
    let mut s = format!(
        "<h1>Usage</h1><p class=\"count\">{} tokens recorded · {} priced</p>",
        thousands(sum(&days.total.usage)),
        cost(days.total.cost)
    );
    s.push_str(&chart(&days.rows));
    for (by, name) in [(By::Model, "Model"), (By::Project, "Project"), (By::Person, "Person"), (By::Agent, "Agent")] {
        let r = report(by)?;
        let _ = write!(
            s,
            "<h2>By {}</h2><table class=\"usage\"><thead><tr><th>{name}</th><th class=\"n\">Input</th><th class=\"n\">Output</th>\
             <th class=\"n\">Cache read</th><th class=\"n\">Cache write</th><th class=\"n\">Cost</th></tr></thead><tbody>",
            name.to_lowercase()
        );
        let n = |v: Option<u64>| thousands(v.unwrap_or(0));
        for row in r.rows.iter().chain(std::iter::once(&r.total)) {
            let key = row
                .key
                .first()
                .map_or("total".to_owned(), |k| if k.is_empty() { "(none)".to_owned() } else { k.clone() });
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(&key),
                n(row.usage.input_tokens),
                n(row.usage.output_tokens),
                n(row.usage.cache_read_tokens),
                n(row.usage.cache_write_tokens),
                cost(row.cost)
            );
        }
        s.push_str("</tbody></table>");
    }
    Ok(Some(Response::html(layout("Usage", "/usage", &s))))
}

/// Tokens by day as bars, each with its day, tokens and cost as its tooltip.
fn chart(rows: &[usage::Row]) -> String {
    if rows.is_empty() {
        return "<p>No model call recorded its usage yet.</p>".to_owned();
    }
    let (w, h, pad) = (900.0, 220.0, 30.0);
    let max = rows.iter().map(|r| sum(&r.usage)).max().unwrap_or(1).max(1) as f64;
    let step = (w - 2.0 * pad) / rows.len() as f64;
    let mut s = format!(
        "<figure class=\"usage-chart\"><svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"tokens by day\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, row) in rows.iter().enumerate() {
        let t = sum(&row.usage) as f64;
        let bh = (t / max * (h - 2.0 * pad)).max(1.0);
        let day = row.key.first().map_or("", String::as_str);
        let _ = write!(
            s,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\"><title>{}: {} tokens, {}</title></rect>",
            pad + i as f64 * step + step * 0.1,
            h - pad - bh,
            (step * 0.8).max(1.0),
            escape(day),
            thousands(t as u64),
            cost(row.cost)
        );
    }
    let first = rows.first().and_then(|r| r.key.first()).map_or(String::new(), |d| escape(d));
    let last = rows.last().and_then(|r| r.key.first()).map_or(String::new(), |d| escape(d));
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{pad}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\"/><text x=\"{pad}\" y=\"{ty}\">{first}</text>\
         <text x=\"{x2}\" y=\"{ty}\" text-anchor=\"end\">{last}</text><text x=\"{pad}\" y=\"{top}\">{} tokens</text></svg>\
         <figcaption>Tokens by day (input, output and cache); hover a bar for its cost.</figcaption></figure>",
        thousands(max as u64),
        y = h - pad,
        x2 = w - pad,
        ty = h - pad + 18.0,
        top = pad - 10.0,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_and_links_encode() {
        let p = Params::parse("q=a+b%26c&x=%zz&page=2");
        assert_eq!(p.get("q"), Some("a b&c"));
        assert_eq!(p.get("x"), Some("%zz"));
        assert_eq!(p.page(), 2);
        assert_eq!(encode("a/b c\"<"), "a%2Fb%20c%22%3C");
        assert_eq!(decode("%E6%97%A5%"), "日%");
    }

    #[test]
    fn a_hit_is_cut_around_its_match_on_character_boundaries() {
        let line = format!("{}needle{}", "日".repeat(400), "x".repeat(400));
        let at = line.find("needle").unwrap();
        let parts = pieces(&line, &[(at, at + 6)]);
        assert_eq!(parts[0], ("…".to_owned(), false));
        assert_eq!(parts[2], ("needle".to_owned(), true));
        assert_eq!(parts.last().unwrap(), &("…".to_owned(), false));
        assert_eq!(parts[1].0.chars().count(), AROUND + 1);
    }
}

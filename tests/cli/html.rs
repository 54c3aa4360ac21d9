//! The HTML export in a real browser: headless Chromium (Debian's `chromium`, which
//! `.ci/test` installs) loads each page from disk with the network off. The URL's `#raw` and
//! `#compacted` drive the page's toggle; the DOM Chromium dumps after the script ran says
//! which view is shown and what a reader sees in it. Each page is also screenshot in light
//! and dark mode (kept under `target/tmp/html-screenshots/` for a person to look at).

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::common::chromium;
use crate::interop::{corpus, external_resources, html_body, html_skeleton};

const CSP: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';";

/// The DOM after the page's script ran, opened from disk at `hash`.
fn dom(env: &TestEnv, page: &Path, hash: &str) -> String {
    chromium::dom(env, &format!("file://{}{hash}", page.display()))
}

/// The text a reader sees in `html`: tags stripped (a block's end ends a line), entities
/// decoded, lines trimmed and blank ones dropped.
pub(crate) fn text(html: &str) -> String {
    const BLOCKS: &[&str] = &[
        "div",
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "article",
        "summary",
        "pre",
        "dt",
        "dd",
        "tr",
        "section",
        "header",
        "footer",
        "nav",
        "figcaption",
        "a",
        "span",
    ];
    let mut text = String::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        text += &rest[..start];
        let end = start + rest[start..].find('>').map_or(rest.len() - start, |e| e + 1);
        let name: String =
            rest[start + 1..end].trim_start_matches('/').chars().take_while(char::is_ascii_alphanumeric).collect();
        if BLOCKS.contains(&name.as_str()) {
            text.push('\n');
        }
        rest = &rest[end.min(rest.len())..];
    }
    text += rest;
    let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// The opening tags named `name` (any, if empty) in `html`; text holds no `<`, it is escaped.
pub(crate) fn tags<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let lower = html.to_ascii_lowercase();
    let open = format!("<{name}");
    let ends_name =
        |c: char| if name.is_empty() { c.is_ascii_alphabetic() } else { c.is_ascii_whitespace() || c == '>' };
    lower
        .match_indices(&open)
        .filter(|(at, _)| lower[at + open.len()..].starts_with(ends_name))
        .map(|(at, _)| &html[at..at + html[at..].find('>').unwrap_or(html.len() - at)])
        .collect()
}

/// The `data-view` of `<body>` and the text of each view not `hidden`, by name.
fn shown(dom: &str) -> (String, Vec<(String, String)>) {
    let body = &dom[dom.find("<body").expect("a <body>")..];
    let body_tag = &body[..body.find('>').unwrap()];
    let view = body_tag.split("data-view=\"").nth(1).and_then(|v| v.split('"').next()).unwrap_or("").to_owned();
    let mut views = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("<section") {
        let open = &rest[start..start + rest[start..].find('>').unwrap()];
        let end = start + rest[start..].find("</section>").expect("a closed section");
        let name = open.split("data-view=\"").nth(1).and_then(|v| v.split('"').next()).unwrap_or("").to_owned();
        if !open.contains(" hidden") {
            views.push((name, text(&rest[start..end])));
        }
        rest = &rest[end..];
    }
    (view, views)
}

/// What `hash` shows of `page`: the one view, which `<body>` names too, and its text.
fn view_at(env: &TestEnv, page: &Path, hash: &str) -> (String, String) {
    let dom = dom(env, page, hash);
    let (body, mut views) = shown(&dom);
    assert_eq!(views.len(), 1, "exactly one view is shown at {hash:?}: {views:?}");
    let (name, text) = views.remove(0);
    assert_eq!(body, name, "<body data-view> names the view shown");
    (name, text)
}

/// A screenshot of `page` in light and in dark mode, kept under `target/tmp/html-screenshots/`.
fn screenshots(env: &TestEnv, page: &Path, name: &str) {
    chromium::screenshots(env, &format!("file://{}", page.display()), name, "html-screenshots", "1200,2000");
}

/// The page loads nothing, as written and as the browser built it, and says so in a CSP.
fn assert_offline(html: &str, dom: &str) {
    assert!(html.contains(CSP), "the page forbids every load");
    assert!(dom.contains(CSP), "the CSP survives parsing");
    assert_eq!(external_resources(html), Vec::<String>::new(), "the page loads nothing from outside");
    assert_eq!(external_resources(dom), Vec::<String>::new(), "the rendered page loads nothing from outside");
    assert_eq!(dom.matches("<script").count(), 1, "the page's own toggle is its one script");
    assert!(!dom.contains("<link") && !dom.contains("<img") && !dom.contains("<iframe"), "nothing embedded");
}

fn export(env: &TestEnv, name: &str, flags: &[&str]) -> (PathBuf, String) {
    let page = env.root.join(format!("{name}.html"));
    let mut args = vec!["export", "--format", "html", "-o", page.to_str().unwrap()];
    args.extend(flags);
    env.run(&args).ok();
    let html = std::fs::read_to_string(&page).unwrap();
    (page, html)
}

/// The OpenHands session, its first turn summarised: the raw view holds the tool calls the
/// summary replaced, the compacted view the summary pair instead; `#raw` and `#compacted`
/// switch between them whatever view the page was written with.
#[test]
fn a_summarised_corpus_session_toggles_between_raw_and_compacted() {
    let env = TestEnv::new();
    env.run(&[
        "import",
        corpus().join("openhands/openhands__tests_runtime_trajs__basic_gui_mode.json").to_str().unwrap(),
    ])
    .ok();
    env.run(&["append", "--user", "Anything left?"]).ok();
    env.run(&["compact", "--to", "0", "--summary", "Built a <b>counter</b> app & served it."]).ok();
    let (page, html) = export(&env, "openhands", &[]);

    let plain = dom(&env, &page, "");
    assert_offline(&html, &plain);
    let (start, _) = shown(&plain);
    assert_eq!(start, "raw", "the page opens on the raw events");

    let (_, raw) = view_at(&env, &page, "#raw");
    let (_, compacted) = view_at(&env, &page, "#compacted");
    let command = "mkdir -p /workspace/todo-app";
    assert!(raw.contains(command) && !compacted.contains(command), "the summarised tool call is raw only");
    assert!(raw.contains("I want to create a VueJS app"), "{raw}");
    assert!(!compacted.contains("I want to create a VueJS app"), "{compacted}");
    assert!(raw.contains("in the summary · #1"), "raw events say where they went: {raw}");
    for text in [
        "[Summary of previous conversation: events …oh-4 to …oh-15]",
        "Built a <b>counter</b> app & served it.",
        "Anything left?",
    ] {
        assert!(compacted.contains(text), "{text:?} in\n{compacted}");
    }
    // Every event of the view, as an LLM is sent it, and every header fact.
    insta::assert_snapshot!("openhands_compacted_view_text", compacted);
    insta::assert_snapshot!("openhands_page_skeleton", html_skeleton(html_body(&plain)));
    screenshots(&env, &page, "openhands");
}

/// CJK text, Markdown, a tool error and a stripped tool result, written with `--compacted`:
/// the page opens on what the model is sent (the status line for the stripped output, the
/// summary for the turn with the error) and `#raw` shows the output itself.
#[test]
fn a_cjk_conversation_with_stripped_output_opens_compacted() {
    let env = TestEnv::new();
    env.new_conversation("日本語と中文の会話");
    env.run(&["append", "--system", "回答请使用中文。"]).ok();
    env.run(&["append", "--user", "请帮我看看 **测试** 为什么失败？\n\n- 运行 `cargo test`\n- 日本語のエラーも"]).ok();
    env.run(&["append", "--reasoning", "まずテストを実行します。"]).ok();
    env.run(&["append", "--tool-call", "bash", "--args", r#"{"command":"cargo test"}"#, "--call-id", "c1"]).ok();
    let output: String = (1..=12).map(|i| format!("test module_{i}::works ... ok 测试通过 {i}\n")).collect();
    env.run(&["append", "--tool-result", "c1", "--content", &output]).ok();
    env.run(&["append", "--assistant", "全部通过 ✅\n\n| 模块 | 结果 |\n|---|---|\n| 渲染 | ok |"]).ok();
    env.run(&["append", "--user", "`src/main.rs` を読んでください。"]).ok();
    env.run(&["append", "--tool-call", "read_file", "--args", r#"{"path":"src/main.rs"}"#, "--call-id", "c2"]).ok();
    env.run(&["append", "--tool-result", "c2", "--error", "--content", "No such file: src/main.rs"]).ok();
    env.run(&["append", "--assistant", "ファイルが見つかりません。"]).ok();
    env.run(&["append", "--user", "谢谢！如何压缩对话？"]).ok();
    env.run(&["append", "--assistant", "使用 `convo compact`。"]).ok();
    env.run(&["compact", "--to", "0", "--tools", "strip", "--reasoning", "strip"]).ok();
    env.run(&["compact", "--from", "1", "--to", "1", "--summary", "用户要求读取 `src/main.rs`；文件不存在。"]).ok();
    let (page, html) = export(&env, "cjk", &["--compacted"]);

    let plain = dom(&env, &page, "");
    assert_offline(&html, &plain);
    let (start, _) = shown(&plain);
    assert_eq!(start, "compacted", "--compacted opens the page on the compacted view");

    let (_, raw) = view_at(&env, &page, "#raw");
    let (_, compacted) = view_at(&env, &page, "#compacted");
    assert!(raw.contains("测试通过 12"), "the raw view holds the tool's output: {raw}");
    assert!(!compacted.contains("测试通过 12"), "the compacted view does not: {compacted}");
    assert!(compacted.contains("] success") && compacted.contains("[compacted …"), "{compacted}");
    assert!(raw.contains("tool result stripped · #1") && compacted.contains("tool result stripped · #1"));
    assert!(raw.contains("No such file: src/main.rs") && raw.contains("error"), "{raw}");
    assert!(!compacted.contains("No such file: src/main.rs"), "the error is in the summarised turn");
    assert!(compacted.contains("用户要求读取 src/main.rs；文件不存在。"), "{compacted}");
    assert!(!compacted.contains("まずテストを実行します。"), "reasoning stripped: {compacted}");
    // Markdown became elements: the table, the list, the inline code.
    assert!(plain.contains("<table>") && plain.contains("<li>运行 <code>cargo test</code></li>"), "{plain}");
    insta::assert_snapshot!("cjk_raw_view_text", raw);
    screenshots(&env, &page, "cjk");
}

/// Markdown in a message cannot make the page run, load or link anything: raw HTML shows
/// as text, a `javascript:` link as its text, an image as its alt text and URL.
#[test]
fn markdown_in_messages_is_inert() {
    let env = TestEnv::new();
    env.new_conversation("<script>alert('title')</script>");
    let hostile = "<script>alert(1)</script>\n\n<img src=http://x.example/a.png>\n\n\
                   [a](javascript:alert(1)) and <img src=http://y.example/b.png onerror=alert(2)> \
                   ![alt text](http://z.example/c.png) [ok](https://example.com/) <a href=\"javascript:alert(3)\">b</a>";
    env.run(&["append", "--user", hostile]).ok();
    env.run(&["append", "--assistant", "# Heading\n\n<details><summary>x</summary>"]).ok();
    let (page, html) = export(&env, "hostile", &[]);
    let dom = dom(&env, &page, "#raw");
    assert_offline(&html, &dom);
    for page in [&html, &dom] {
        assert_eq!(tags(page, "script").len(), 1, "only the page's own script");
        assert_eq!(tags(page, "img"), Vec::<&str>::new(), "no image element");
        let links = tags(page, "a");
        assert!(links.iter().all(|a| !a.to_ascii_lowercase().contains("javascript")), "no script link: {links:?}");
        let handlers: Vec<&str> = tags(page, "")
            .into_iter()
            .filter(|tag| tag.split_ascii_whitespace().skip(1).any(|a| a.to_ascii_lowercase().starts_with("on")))
            .collect();
        assert_eq!(handlers, Vec::<&str>::new(), "no handler attribute");
    }
    assert!(dom.contains("<a href=\"https://example.com/\">ok</a>"), "a web link stays a link");
    let (_, raw) = view_at(&env, &page, "#raw");
    insta::assert_snapshot!(raw, @r#"
    Turn 0
    ~70 → ~70 tokens
    User
    <script>alert(1)</script>
    <img src=http://x.example/a.png>
    a (javascript:alert(1)) and <img src=http://y.example/b.png onerror=alert(2)> [image: alt text] http://z.example/c.png
    ok
    <a href="javascript:alert(3)">b</a>
    Assistant
    Heading
    <details><summary>x</summary>
    "#);
}

/// The compacted view of the page, as text: what a reader sees in it (no browser needed:
/// the section is in the page as written).
fn compacted_text(html: &str) -> String {
    let start = html.find("<section class=\"view\" data-view=\"compacted\"").expect("a compacted view");
    let end = start + html[start..].find("</section>").expect("a closed section");
    text(&html[start..end])
}

/// Tool calls left out of turn 0 leave two user messages in a row: `show --compacted` puts
/// the `[no reply]` placeholder in turn 0, after its question, and so does the page (it is
/// in the view a model is sent, and it answers that turn). Each compaction's line in the
/// header counts what it did in English: "1 tool result stripped", "2 tool results stripped".
#[test]
fn the_compacted_page_shows_placeholders_where_show_does_and_counts_in_english() {
    let env = TestEnv::new();
    env.new_conversation("placeholders");
    let lines = [
        r#"{"type":"user","content":"first question"}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"Bash","arguments":{"cmd":"ls"}}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"no such dir","is_error":true}"#,
        r#"{"type":"user","content":"second question"}"#,
        r#"{"type":"tool_call","call_id":"c2","name":"Bash","arguments":{"cmd":"ls a"}}"#,
        r#"{"type":"tool_result","call_id":"c2","content":"total 4\na1.txt a2.txt a3.txt a4.txt"}"#,
        r#"{"type":"tool_call","call_id":"c3","name":"Bash","arguments":{"cmd":"ls b"}}"#,
        r#"{"type":"tool_result","call_id":"c3","content":"total 4\nb1.txt b2.txt b3.txt b4.txt"}"#,
        r#"{"type":"assistant","content":"answer two"}"#,
        r#"{"type":"user","content":"third question"}"#,
        r#"{"type":"reasoning","content":"think"}"#,
        r#"{"type":"tool_call","call_id":"c4","name":"Bash","arguments":{"cmd":"ls c"}}"#,
        r#"{"type":"tool_result","call_id":"c4","content":"total 4\nc1.txt c2.txt c3.txt c4.txt"}"#,
        r#"{"type":"assistant","content":"answer three"}"#,
        r#"{"type":"user","content":"fourth question"}"#,
        r#"{"type":"assistant","content":"answer four"}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    env.run(&["compact", "--to", "0", "--tools", "omit"]).ok();
    env.run(&["compact", "--from", "1", "--to", "1", "--tools", "strip-responses", "--min-bytes", "0"]).ok();
    env.run(&["compact", "--from", "2", "--to", "2", "--tools", "strip", "--reasoning", "strip", "--min-bytes", "0"])
        .ok();

    let show = env.run(&["show", "--compacted"]).ok().to_owned();
    let in_show = |text: &str| show.find(text).unwrap_or_else(|| panic!("{text:?} in\n{show}"));
    assert!(in_show("── turn 0") < in_show("[no reply]") && in_show("[no reply]") < in_show("── turn 1"), "{show}");

    let (_, html) = export(&env, "placeholders", &[]);
    // Up to turn 1's question: the rest is the stripped results the header counts.
    let compacted = compacted_text(&html);
    let compacted = &compacted[..compacted.find("second question").unwrap() + "second question".len()];
    insta::assert_snapshot!(compacted, @"
    Turn 0
    ~11 → ~6 tokens
    User
    first question
    Assistant
    placeholder, keeps the view valid
    [no reply]
    Turn 1
    ~33 → ~30 tokens
    User
    second question
    ");
    let facts: Vec<&str> = html.lines().filter(|l| l.contains("class=\"stripped\"")).collect();
    let facts = text(&facts.join("\n"));
    insta::assert_snapshot!(facts, @"
    Compaction #1 · turn 0 · events 0–2 (3 events) · strip reasoning, omit tool calls, over 50 bytes · ~71 → ~67 tokens when made
    In the compacted view: 2 tool events left out
    Compaction #2 · turn 1 · events 3–8 (6 events) · strip reasoning, strip tool responses, over 0 bytes · ~67 → ~64 tokens when made
    In the compacted view: 2 tool results stripped
    Compaction #3 · turn 2 · events 9–13 (5 events) · strip reasoning, strip tool calls, over 0 bytes · ~64 → ~58 tokens when made
    In the compacted view: 1 reasoning event stripped, 1 tool call's arguments stripped, 1 tool result stripped
    ");
}

//! Import and export on the real transcripts in ../shared/corpus: counts checked against the
//! files themselves (read here with serde_json, independently of the importers), round trips,
//! provider-valid views, and malformed input that must write nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use serde_json::Value;

pub(crate) fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

/// `text` with the corpus directory shown as `[CORPUS]`, so a snapshot does not depend on
/// where the checkout is.
fn redact_corpus(text: &str) -> String {
    text.replace(corpus().to_str().unwrap(), "[CORPUS]")
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Counts {
    user: usize,
    assistant: usize,
    tool_call: usize,
    tool_result: usize,
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What the file holds, counted straight from its JSON.
fn expected(path: &Path) -> Counts {
    let mut c = Counts::default();
    let name = path.to_string_lossy();
    if name.contains("/claude-code/") {
        let lines = jsonl(path);
        let calls: HashSet<String> = lines
            .iter()
            .filter(|l| l["type"] == "assistant")
            .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["id"].as_str().unwrap().to_owned())
            .collect();
        c.tool_call = calls.len();
        for l in &lines {
            let content = &l["message"]["content"];
            match l["type"].as_str() {
                Some("user") if l["isCompactSummary"] != true => match content {
                    Value::String(s) if !s.trim().is_empty() => c.user += 1,
                    Value::Array(blocks) => {
                        let text: String =
                            blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
                        if !text.trim().is_empty() {
                            c.user += 1;
                        }
                        c.tool_result += blocks
                            .iter()
                            .filter(|b| {
                                b["type"] == "tool_result" && calls.contains(b["tool_use_id"].as_str().unwrap_or(""))
                            })
                            .count();
                    }
                    _ => {}
                },
                Some("assistant") => {
                    c.assistant += content.as_array().map_or(0, |b| b.iter().filter(|b| b["type"] == "text").count())
                }
                _ => {}
            }
        }
    } else if name.contains("/codex/") {
        let items: Vec<Value> =
            jsonl(path).into_iter().filter(|l| l["type"] == "response_item").map(|l| l["payload"].clone()).collect();
        // A result counts when its call came before it (the fixture has one that does not).
        let mut calls: HashSet<String> = HashSet::new();
        for p in &items {
            match (p["type"].as_str(), p["role"].as_str()) {
                (Some("message"), Some("user")) => c.user += 1,
                (Some("message"), Some("assistant")) | (Some("agent_message"), _) => c.assistant += 1,
                (Some("function_call" | "custom_tool_call" | "tool_search_call"), _) => {
                    c.tool_call += 1;
                    calls.insert(p["call_id"].as_str().unwrap_or("").to_owned());
                }
                (Some("function_call_output" | "custom_tool_call_output" | "tool_search_output"), _)
                    if calls.contains(p["call_id"].as_str().unwrap_or("")) =>
                {
                    c.tool_result += 1;
                }
                _ => {}
            }
        }
    } else if name.contains("/openai-chat/") {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for m in doc["history"].as_array().unwrap() {
            match m["role"].as_str() {
                Some("user") => c.user += 1,
                Some("assistant") => {
                    if m["content"].as_str().is_some_and(|s| !s.trim().is_empty()) {
                        c.assistant += 1;
                    }
                    c.tool_call += m["tool_calls"].as_array().map_or(0, Vec::len);
                }
                Some("tool") => c.tool_result += 1,
                _ => {}
            }
        }
    } else if name.contains("/openhands/") {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let events = doc.as_array().unwrap();
        let actions: HashSet<u64> = events
            .iter()
            .filter(|e| {
                e["source"] == "agent"
                    && e["action"].is_string()
                    && e["action"] != "message"
                    && e["action"] != "change_agent_state"
            })
            .filter_map(|e| e["id"].as_u64())
            .collect();
        for e in events {
            match (e["source"].as_str(), e["action"].as_str()) {
                (Some("user"), Some("message")) => c.user += 1,
                (Some("agent"), Some("message")) => c.assistant += 1,
                _ => {}
            }
            if e["cause"].as_u64().is_some_and(|cause| actions.contains(&cause)) && e["observation"].is_string() {
                c.tool_result += 1;
            }
        }
        c.tool_call = actions.len();
    }
    c
}

/// Counts of a store's imported events, over every conversation (subagents included).
fn imported(env: &TestEnv) -> Counts {
    let mut c = Counts::default();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    for conv in list.as_array().unwrap() {
        for line in env.run(&["show", conv["id"].as_str().unwrap(), "--format", "jsonl"]).ok().lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            match e["type"].as_str() {
                Some("user") => c.user += 1,
                Some("assistant") => c.assistant += 1,
                Some("tool_call") => c.tool_call += 1,
                Some("tool_result") => c.tool_result += 1,
                _ => {}
            }
        }
    }
    c
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(corpus()).expect("../shared/corpus beside the checkout").flatten() {
        if dir.path().is_dir() {
            files.extend(std::fs::read_dir(dir.path()).unwrap().flatten().map(|f| f.path()));
        }
    }
    files.sort();
    files
}

/// The compacted view of every conversation obeys the provider rules.
fn assert_provider_valid(env: &TestEnv) {
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    for conv in list.as_array().unwrap() {
        let id = conv["id"].as_str().unwrap();
        let view = env.run(&["show", id, "--compacted", "--format", "jsonl"]).ok().to_owned();
        let events = convo::event::parse_stored(&view).unwrap();
        convo::projection::check_valid(&events).unwrap_or_else(|e| panic!("{id}: {e}"));
        for format in ["openai", "anthropic"] {
            let body: Value = serde_json::from_str(env.run(&["export", id, "--format", format]).ok()).unwrap();
            assert!(body["messages"].as_array().is_some_and(|m| !m.is_empty()), "{id} {format}");
            if format == "anthropic" {
                let roles: Vec<&str> =
                    body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
                assert!(roles.windows(2).all(|w| w[0] != w[1]), "{id}: anthropic roles must alternate: {roles:?}");
                assert_eq!(roles.first(), Some(&"user"));
            }
        }
    }
}

#[test]
fn every_corpus_file_imports_with_the_counts_the_file_holds() {
    let files = corpus_files();
    assert!(files.len() >= 5, "{files:?}");
    let mut refusals = String::new();
    for file in files {
        refusals += &format!("=== {}\n", file.file_name().unwrap().to_str().unwrap());
        let env = TestEnv::new();
        let out = env.run(&["import", file.to_str().unwrap()]);
        out.ok();
        assert_eq!(imported(&env), expected(&file), "{}", file.display());
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
        assert_provider_valid(&env);
        // Importing it again is caught; --again makes a copy.
        let again = env.run(&["import", file.to_str().unwrap()]);
        refusals += &redact_corpus(&env.transcript(&again));
        env.run(&["import", "--again", file.to_str().unwrap()]).ok();
    }
    insta::assert_snapshot!("second_import_of_each_corpus_file", refusals);
}

#[test]
fn compactions_from_the_source_become_convo_compactions() {
    let env = TestEnv::new();
    let file = corpus().join("codex/agent-sessions__stage0_codex_small.SCHEMA-FIXTURE.jsonl");
    let out = env.run(&["import", file.to_str().unwrap()]);
    insta::assert_snapshot!(redact_corpus(&env.transcript(&out)), @"
    exit 0
    --- stdout
    01KDVDQ4K0000000000000000K
    --- stderr
    Imported agent-sessions__stage0_codex_small.SCHEMA-FIXTURE.jsonl as codex (01KDVDQ4K0000000000000000K): 118 records read
      events: 3 assistant, 2 reasoning, 1 system, 6 tool_call, 5 tool_result, 1 user
      turns: 1
      compactions from the source: 6
      skipped 1: `inter_agent_communication_metadata` record
      skipped 64: event_msg (repeats a response item)
      skipped 1: response item `ghost_snapshot`
      skipped 1: response item `image_generation_call`
      skipped 1: response item `web_search_call`
      skipped 1: token_count (kept as its call's usage)
      skipped 2: token_count with no new tokens
      skipped 1: tool result without its call
    ");
    let raw = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    // The stored compaction events (the rest is the whole codex session).
    // What Codex sends in place of each range (`agent_history`) is kept whole; shown by size.
    let compactions: Vec<String> = raw
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "compaction")
        .map(|mut e| {
            let items = e["summary"]["agent_history"].as_array().map(Vec::len);
            if let Some(n) = items {
                e["summary"]["agent_history"] = Value::String(format!("<{n} items>"));
            }
            e.to_string()
        })
        .collect();
    insta::assert_snapshot!(compactions.join("\n"), @r#"
    {"id":"01KDVDQ4K00000000000000001","ts":"2026-08-03T10:48:56.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"msg-2","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<1 items>"}}
    {"id":"01KDVDQ4K00000000000000006","ts":"2026-01-01T00:01:00.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"01KDVDQ4K00000000000000005","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<8 items>"}}
    {"id":"01KDVDQ4K00000000000000007","ts":"2026-01-01T00:01:00.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"01KDVDQ4K00000000000000006","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<21 items>"}}
    {"id":"01KDVDQ4K00000000000000008","ts":"2026-01-01T00:01:00.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"01KDVDQ4K00000000000000007","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<51 items>"}}
    {"id":"01KDVDQ4K00000000000000009","ts":"2026-01-01T00:01:00.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"01KDVDQ4K00000000000000008","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<65 items>"}}
    {"id":"01KDVDQ4K0000000000000000E","ts":"2026-01-01T00:01:00.000Z","type":"compaction","from_turn":0,"to_turn":0,"from_event":"msg-1","to_event":"01KDVDQ4K0000000000000000D","summary":{"text":"[trimmed for fixture]","by":"codex","agent_history":"<13 items>"}}
    "#);
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    insta::assert_snapshot!("compacted_view_of_a_codex_session", view);
}

#[test]
fn jsonl_export_round_trips_through_import() {
    for file in corpus_files() {
        let env = TestEnv::new();
        env.run(&["import", file.to_str().unwrap()]).ok();
        let exported = env.root.join("export.jsonl");
        env.run(&["export", "--format", "jsonl", "-o", exported.to_str().unwrap()]).ok();
        let id = env.run(&["import", "--again", exported.to_str().unwrap()]).ok().trim().to_owned();
        let again = env.run(&["export", &id, "--format", "jsonl"]).ok().to_owned();
        assert_eq!(again, std::fs::read_to_string(&exported).unwrap(), "{}", file.display());
    }
}

#[test]
fn readable_exports_show_turns_tools_and_compacted_ranges() {
    let env = TestEnv::new();
    env.run(&[
        "import",
        corpus()
            .join("openai-chat/sweagent__demo_function_calling_replace_from_source__marshmallow-1867.traj")
            .to_str()
            .unwrap(),
    ])
    .ok();
    env.run(&["compact", "--to", "0", "--summary", "Fixed the <rounding> & the test."]).ok();
    let md = env.run(&["export", "--format", "markdown"]).ok().to_owned();
    insta::assert_snapshot!("readable_export_markdown", md);
    let html = env.run(&["export", "--format", "html"]).ok().to_owned();
    assert_eq!(external_resources(&html), Vec::<String>::new(), "the page loads nothing from outside");
    // The page's structure; the text of every event is in the Markdown snapshot above.
    insta::assert_snapshot!("readable_export_html_skeleton", html_skeleton(html_body(&html)));
}

/// `html` with the body of every `<pre>` elided: the structure of an exported page.
pub(crate) fn html_skeleton(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<pre>") {
        let end = rest[start..].find("</pre>").map_or(rest.len(), |e| start + e);
        out += &rest[..start];
        out += "<pre>…";
        rest = &rest[end..];
    }
    out + rest
}

/// The body of an exported page (the head is the same style sheet on every page).
pub(crate) fn html_body(html: &str) -> &str {
    let start = html.find("<body").expect("a <body>");
    &html[start..]
}

/// A tool name or result cannot break out of its block: the Markdown escapes the name and
/// fences the result with more backticks than any run inside; the HTML escapes both.
#[test]
fn exports_keep_hostile_tool_names_and_results_inside_their_blocks() {
    let env = TestEnv::new();
    env.new_conversation("hostile\n\n<script>x</script>");
    env.run(&["append", "--user", "run it <details><summary>swallow the rest"]).ok();
    env.run_stdin(&["append"], "{\"type\":\"reasoning\",\"content\":\"think </details>\\n\\nout <script>\"}\n").ok();
    let name = "x</summary></details><script>alert(1)</script>";
    env.run(&["append", "--tool-call", name, "--args", r#"{"cmd":"echo ````"}"#, "--call-id", "c1"]).ok();
    let result = "```\nnot code any more\n````\n</details>\n`````` six\nend";
    env.run(&["append", "--tool-result", "c1", "--content", result]).ok();
    env.run(&["append", "--assistant", "done"]).ok();

    let md = env.run(&["export", "--format", "markdown"]).ok().to_owned();
    // Read it as CommonMark does: a fence closes at a line of at least as many backticks.
    let (mut outside, mut blocks, mut open) = (String::new(), Vec::new(), None::<(usize, String)>);
    for line in md.lines() {
        let ticks = line.chars().take_while(|c| *c == '`').count();
        match &mut open {
            None if ticks >= 3 => open = Some((ticks, String::new())),
            None => outside += &format!("{line}\n"),
            Some((n, _)) if ticks >= *n && line.trim_end().chars().all(|c| c == '`') => {
                blocks.push(open.take().unwrap().1);
            }
            Some((_, body)) => *body += &format!("{line}\n"),
        }
    }
    assert!(open.is_none(), "a fence is left open:\n{md}");
    // The arguments, the reasoning and the result are each one whole block.
    assert_eq!(
        blocks,
        [
            "think </details>\n\nout <script>\n".to_owned(),
            "{\n  \"cmd\": \"echo ````\"\n}\n".to_owned(),
            format!("{result}\n"),
        ],
        "{md}"
    );
    for tag in ["details", "summary"] {
        let opened = outside.matches(&format!("<{tag}>")).count();
        assert_eq!(opened, 3, "{tag}:\n{outside}");
        assert_eq!(outside.matches(&format!("</{tag}>")).count(), opened, "{tag}:\n{outside}");
    }
    // A negative check, kept beside the snapshot: no raw <script> outside a block, whatever
    // else the export may come to print.
    assert!(!outside.contains("<script>"), "{outside}");
    insta::assert_snapshot!(md, @r#"
    # hostile &lt;script&gt;x&lt;/script&gt;

    ## Turn 0

    **User**

    run it &lt;details>&lt;summary>swallow the rest

    <details><summary>Reasoning</summary>

    ```
    think </details>

    out <script>
    ```

    </details>

    <details><summary>Tool call: x&lt;/summary&gt;&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt; (c1)</summary>

    `````json
    {
      "cmd": "echo ````"
    }
    `````

    </details>

    <details><summary>Tool result (c1)</summary>

    ```````
    ```
    not code any more
    ````
    </details>
    `````` six
    end
    ```````

    </details>

    **Assistant**

    done
    "#);

    let html = env.run(&["export", "--format", "html"]).ok().to_owned();
    // Likewise: no <script> in the page but its own toggle, at the end.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(html.trim_end().ends_with("</script>\n</body></html>"), "{html}");
    let raw = &html[html.find("<section class=\"view\" data-view=\"raw\"").unwrap()..];
    let raw = &raw[..raw.find("</section>").unwrap()];
    assert!(html.contains("<h1>hostile\n\n&lt;script&gt;x&lt;/script&gt;</h1>"), "{html}");
    insta::assert_snapshot!(raw, @r#"
    <section class="view" data-view="raw" id="view-raw">
    <h2 class="turn" id="r-t0"><span>Turn 0</span><span class="tt">~48 → ~48 tokens<span class="minibar"><i class="raw" style="width:100.0%"></i><i class="cmp" style="width:100.0%"></i></span></span></h2>
    <article class="msg user"><div class="who">User</div><div class="md"><p>run it &lt;details&gt;&lt;summary&gt;swallow the rest</p>
    </div></article>
    <details class="fold reasoning"><summary><span class="kind">Reasoning</span> <span class="sub">· 3 lines · 30 B</span> </summary><div class="md"><p>think &lt;/details&gt;</p>
    <p>out &lt;script&gt;</p>
    </div></details>
    <details class="fold tool call"><summary><span class="kind">Tool call</span> <code>x&lt;/summary&gt;&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code> <span class="sub">· echo ```` · 19 B</span> <span class="status ok">ok</span> </summary><dl class="args"><dt>cmd</dt><dd><pre>echo ````</pre></dd></dl></details>
    <details class="fold tool result"><summary><span class="kind">Result</span> <code>x&lt;/summary&gt;&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code> <span class="sub">· 6 lines · 52 B</span> <span class="status ok">ok</span> </summary><pre>```
    not code any more
    ````
    &lt;/details&gt;
    `````` six
    end</pre></details>
    <article class="msg assistant"><div class="who">Assistant</div><div class="md"><p>done</p>
    </div></article>
    "#);
    for tag in ["details", "summary", "pre"] {
        assert_eq!(html.matches(&format!("<{tag}")).count(), html.matches(&format!("</{tag}>")).count(), "{tag}");
    }
}

#[test]
fn malformed_input_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    env.new_conversation("keep");
    let before = env.snapshot();
    let claude =
        std::fs::read_to_string(corpus().join("claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"))
            .unwrap();
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("truncated.jsonl", claude.as_bytes()[..claude.len() - 40].to_vec(), vec!["--format", "claude-code"]),
        ("binary.bin", vec![0, 159, 146, 150, 0, 1, 2], vec![]),
        ("empty.jsonl", Vec::new(), vec![]),
        ("array.json", b"[{\"type\":\"user\"}]".to_vec(), vec!["--format", "claude-code"]),
        ("nothing.txt", b"hello world\n".to_vec(), vec![]),
    ];
    let mut refusals = String::new();
    for (name, bytes, flags) in cases {
        let path = env.root.join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut args = vec!["import"];
        args.extend(flags);
        args.push(path.to_str().unwrap());
        let out = env.run(&args);
        refusals += &format!("=== {name}\n{}", env.transcript(&out));
        assert!(env.snapshot() == before, "{name} changed the store");
    }
    insta::assert_snapshot!(refusals, @"
    === truncated.jsonl
    exit 3
    --- stderr
    error: truncated.jsonl: line 53 is cut short: the session is still being written
    hint: nothing was written; `convo import --follow FILE` imports its whole lines, and what comes later
    hint: --skip-bad-lines imports it without that line
    === binary.bin
    exit 3
    --- stderr
    error: binary.bin: the file is binary, not UTF-8 text
    === empty.jsonl
    exit 3
    --- stderr
    error: empty.jsonl: the file is empty
    hint: nothing was written; --format names the format
    === array.json
    exit 3
    --- stderr
    error: array.json: a JSON array, not JSON lines
    hint: nothing was written; --format names the format
    === nothing.txt
    exit 3
    --- stderr
    error: nothing.txt: not a format convo reads (jsonl: line 1: not valid JSON (expected value at line 1 column 1); claude-code: line 1: not valid JSON (expected value at line 1 column 1); codex: line 1: not valid JSON (expected value at line 1 column 1); gemini-cli: line 1: not valid JSON (expected value at line 1 column 1); openhands: not one JSON document (expected value at line 1 column 1); openai: not one JSON document (expected value at line 1 column 1); anthropic: not one JSON document (expected value at line 1 column 1))
    hint: nothing was written; --format names the format
    ");
}

/// What a page would load from elsewhere: every `src`, `srcset`, `poster`, `data`,
/// `background` and (except on `<a>`, which only navigates) `href` attribute that is not a
/// fragment or a `data:` URL, and every CSS `url(…)` or `@import` that is not `data:`.
/// Attributes are parsed, quoted or not, so `<link href=https://…>` is found too.
pub(crate) fn external_resources(html: &str) -> Vec<String> {
    let is_local = |url: &str| {
        let url = url.trim().to_ascii_lowercase();
        url.is_empty() || url.starts_with('#') || url.starts_with("data:")
    };
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let name_end = rest.find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/').unwrap_or(rest.len());
        let tag = rest[..name_end].to_ascii_lowercase();
        let mut attrs = &rest[name_end..];
        loop {
            attrs = attrs.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
            if attrs.is_empty() || attrs.starts_with('>') {
                break;
            }
            let name_len = attrs.find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '>').unwrap_or(attrs.len());
            let name = attrs[..name_len].to_ascii_lowercase();
            attrs = attrs[name_len..].trim_start();
            let mut value = "";
            if let Some(after) = attrs.strip_prefix('=') {
                let after = after.trim_start();
                let (v, len) = match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let end = after[1..].find(q).map_or(after.len(), |e| e + 1);
                        (&after[1..end], (end + 1).min(after.len()))
                    }
                    _ => {
                        let end = after.find(|c: char| c.is_ascii_whitespace() || c == '>').unwrap_or(after.len());
                        (&after[..end], end)
                    }
                };
                value = v;
                attrs = &after[len..];
            }
            let loads = match name.as_str() {
                "src" | "poster" | "data" | "background" => true,
                "href" => tag != "a",
                _ => false,
            };
            let urls = match name.as_str() {
                "srcset" => srcset_urls(value),
                _ if loads => vec![value],
                _ => vec![],
            };
            found.extend(urls.into_iter().filter(|u| !is_local(u)).map(|u| format!("<{tag} {name}={u}>")));
            if name == "style" {
                found.extend(css_urls(value).into_iter().filter(|u| !is_local(u)));
            }
        }
        if tag == "style" {
            let body = &rest[rest.find('>').map_or(rest.len(), |e| e + 1)..];
            let body = &body[..body.to_ascii_lowercase().find("</style").unwrap_or(body.len())];
            found.extend(css_urls(body).into_iter().filter(|u| !is_local(u)));
        }
    }
    found
}

/// The URLs of a `srcset` ("url 1x, url 2x"): a URL runs to the next space, its
/// descriptors to the next comma (a `data:` URL holds commas of its own).
fn srcset_urls(srcset: &str) -> Vec<&str> {
    let mut urls = Vec::new();
    let mut want_url = true;
    for token in srcset.split_ascii_whitespace() {
        if want_url {
            urls.push(token.strip_suffix(',').unwrap_or(token));
            want_url = token.ends_with(',');
        } else {
            want_url = token.ends_with(',');
        }
    }
    urls
}

/// The targets of `url(…)` and `@import "…"` in CSS.
fn css_urls(css: &str) -> Vec<String> {
    let lower = css.to_ascii_lowercase();
    let mut urls = Vec::new();
    for (at, _) in lower.match_indices("url(") {
        let inner = &css[at + 4..];
        let inner = &inner[..inner.find(')').unwrap_or(inner.len())];
        urls.push(inner.trim().trim_matches(|c| c == '"' || c == '\'').to_owned());
    }
    for (at, _) in lower.match_indices("@import") {
        let inner = css[at + 7..].trim_start();
        if let Some(q @ ('"' | '\'')) = inner.chars().next() {
            urls.push(inner[1..].split(q).next().unwrap_or("").to_owned());
        }
    }
    urls
}

/// The check above must be able to fail: every way a page can pull something in is found,
/// and what only navigates or is inline is not.
#[test]
fn external_resources_finds_every_outside_load() {
    let page = r##"<!doctype html><html><head>
<link rel="stylesheet" href="https://cdn.example/x.css"><LINK REL=icon HREF=http://e.example/i.png>
<script src='//cdn.example/x.js'></script><style>@import "https://f.example/a.css"; p { background: url(https://g.example/b.png) }</style>
</head><body><img srcset="data:image/png;base64,AA 1x, https://h.example/c.png 2x"><div style="background:url('https://i.example/d.png')"></div>
<a href="https://j.example/">a link only navigates</a><a href="#t1">turn 1</a><img src="data:image/png;base64,AA">
<p>text mentioning https://k.example/ and &lt;link href="https://l.example/"&gt;</p></body></html>"##;
    assert_eq!(
        external_resources(page),
        [
            "<link href=https://cdn.example/x.css>",
            "<link href=http://e.example/i.png>",
            "<script src=//cdn.example/x.js>",
            "https://g.example/b.png",
            "https://f.example/a.css",
            "<img srcset=https://h.example/c.png>",
            "https://i.example/d.png",
        ]
    );
    assert_eq!(
        external_resources("<!doctype html><p>plain</p><a href=\"https://x.example\">x</a>"),
        Vec::<String>::new()
    );
}

/// A streamed import writes segments as it reads; one that fails on its last line, or is
/// refused as a duplicate, must take those objects back out, not leave them for `git gc`.
#[test]
fn an_import_that_fails_late_leaves_no_objects_behind() {
    // Long enough that whole batches of events, and so segments, are written before the end.
    let mut session = String::new();
    for n in 1..=1500 {
        let (role, text) = if n % 2 == 1 { ("user", "please look at the parser") } else { ("assistant", "done") };
        let parent = if n == 1 { "null".to_owned() } else { format!("\"u{}\"", n - 1) };
        session += &format!(
            "{{\"type\":\"{role}\",\"uuid\":\"u{n}\",\"parentUuid\":{parent},\"isSidechain\":false,\
             \"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{{\"role\":\"{role}\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"{text} (turn {n})\"}}]}}}}\n"
        );
    }
    let source = TestEnv::new();
    let long = source.root.join("long.jsonl");
    std::fs::write(&long, &session).unwrap();
    source.run(&["import", long.to_str().unwrap()]).ok();
    // convo's own JSONL has no first pass over the file, unlike Claude Code's (sidechains).
    let events = source.run(&["export", "--format", "jsonl"]).ok().to_owned();

    let mut refusals = String::new();
    for (name, text) in [("claude.jsonl", session), ("convo.jsonl", events)] {
        let env = TestEnv::new();
        env.new_conversation("keep");
        let before = env.snapshot();
        let bad = env.root.join(name);
        std::fs::write(&bad, format!("{text}{{\"type\":\"user\",\n")).unwrap();
        let out = env.run(&["import", bad.to_str().unwrap()]);
        refusals += &format!("=== {name}, cut short\n{}", env.transcript(&out));
        assert!(env.snapshot() == before, "{name}: a failed import left files in the store");

        let good = env.root.join(format!("good-{name}"));
        std::fs::write(&good, &text).unwrap();
        env.run(&["import", good.to_str().unwrap()]).ok();
        let before = env.snapshot();
        let again = env.run(&["import", good.to_str().unwrap()]);
        refusals += &format!("=== {name}, again\n{}", env.transcript(&again));
        assert!(env.snapshot() == before, "{name}: a refused duplicate left files in the store");
    }
    insta::assert_snapshot!(refusals, @r#"
    === claude.jsonl, cut short
    exit 3
    --- stderr
    error: claude.jsonl: line 1501: not valid JSON (EOF while parsing a value at line 1 column 15)
    hint: nothing was written; --format names the format
    === claude.jsonl, again
    exit 3
    --- stderr
    error: good-claude.jsonl is already imported, as 01KDVDTSS00000000000000001 "please look at the parser (turn 1)"
    hint: --again makes another copy
    === convo.jsonl, cut short
    exit 3
    --- stderr
    error: convo.jsonl: line 1501: not valid JSON (EOF while parsing a value at line 1 column 15)
    hint: nothing was written; --format names the format
    === convo.jsonl, again
    exit 3
    --- stderr
    error: good-convo.jsonl is already imported, as 01KDVDTSS00000000000000001 "please look at the parser (turn 1)"
    hint: --again makes another copy
    "#);
}

/// On a terminal an import shows a byte-counting progress bar on stderr; piped, stderr holds
/// only the report. `script` (util-linux, in every Debian) gives the command a pseudo-terminal.
#[test]
fn import_shows_a_progress_bar_only_on_a_terminal() {
    let env = TestEnv::new();
    let file = corpus().join("claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    let line = format!("{} import {}", env!("CARGO_BIN_EXE_convo"), file.display());
    let mut cmd = env.sealed("script");
    // indicatif draws nothing on a terminal without TERM (or with TERM=dumb): it cannot move
    // the cursor there.
    cmd.args(["-qec", &line, "/dev/null"]).env("CONVO_DIR", &env.store).env("TERM", "xterm");
    let on_terminal = crate::common::run_command(cmd, "");
    assert_eq!(on_terminal.code, 0, "{}", on_terminal.stderr);
    // Each frame of the bar is erased before the next (and before the report); how many
    // frames there are and the counts in them depend on timing, so they are normalised.
    let mut frames: Vec<&str> = on_terminal.stdout.split("\x1b[1A\r\x1b[2K\x1b[1B\r\x1b[2K\x1b[1A").collect();
    let report = frames.pop().unwrap().replace("\r\n", "\n");
    assert!(!frames.is_empty(), "no progress bar: {:?}", on_terminal.stdout);
    let counts = regex::Regex::new(r"[█░]{30} [\d.]+ (B|KiB|MiB)/([\d.]+ KiB) \([\d.]+ (B|KiB|MiB)/s\) *$").unwrap();
    let frames: std::collections::BTreeSet<String> =
        frames.iter().map(|f| counts.replace(f, "[BAR] [DONE]/$2 ([RATE])").into_owned()).collect();
    assert_eq!(
        frames.into_iter().collect::<Vec<_>>(),
        ["importing ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl [BAR] [DONE]/756.33 KiB ([RATE])"]
    );
    insta::assert_snapshot!(report, @"
    01KDVDQ4K00000000000000001
    Imported ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl as claude-code (01KDVDQ4K00000000000000001): 438 records read
      events: 95 assistant, 167 tool_call, 167 tool_result, 8 user
      turns: 3
      subagent conversation: 01KDVDQ5000000000000000002 (1 turn, 21 events)
      subagent conversation: 01KDVDQ6000000000000000003 (1 turn, 86 events)
      subagent conversation: 01KDVDQ7000000000000000004 (1 turn, 98 events)
      subagent conversation: 01KDVDQ8000000000000000005 (1 turn, 65 events)
      subagent conversation: 01KDVDQ9000000000000000006 (1 turn, 135 events)
      skipped 1: summary record (used as the title)
    ");

    let piped = env.run(&["import", "--again", file.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&piped), @"
    exit 0
    --- stdout
    01KDVDRZ600000000000000001
    --- stderr
    Imported ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl as claude-code (01KDVDRZ600000000000000001): 438 records read
      events: 95 assistant, 167 tool_call, 167 tool_result, 8 user
      turns: 3
      subagent conversation: 01KDVDS0000000000000000002 (1 turn, 21 events)
      subagent conversation: 01KDVDS1000000000000000003 (1 turn, 86 events)
      subagent conversation: 01KDVDS2000000000000000004 (1 turn, 98 events)
      subagent conversation: 01KDVDS3000000000000000005 (1 turn, 65 events)
      subagent conversation: 01KDVDS4000000000000000006 (1 turn, 135 events)
      skipped 1: summary record (used as the title)
    ");
}

/// A Claude Code file is read whole once (for its subagent map) before the store is opened,
/// so a bad one on a fresh machine does not even create the default store.
#[test]
fn a_bad_session_on_a_fresh_machine_creates_no_store() {
    let env = TestEnv::bare();
    let bad = env.root.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{oops\n",
    )
    .unwrap();
    let out = env.run(&["import", "--format", "claude-code", bad.to_str().unwrap()]);
    assert_eq!(
        out.fails_with(3),
        "error: bad.jsonl: line 2: not valid JSON (key must be a string at line 1 column 2)\n\
         hint: nothing was written; --format names the format\n"
    );
    assert!(!env.store.exists(), "a failed import created the store");
}

/// A session with no events (only records convo skips) still becomes a conversation with
/// its title and fingerprint, so importing it twice is caught like any other.
#[test]
fn a_session_without_events_is_titled_and_caught_when_imported_twice() {
    let env = TestEnv::new();
    let file = env.root.join("summary-only.jsonl");
    std::fs::write(&file, "{\"type\":\"summary\",\"summary\":\"Fix the parser\",\"leafUuid\":\"u9\"}\n").unwrap();
    let id = env.run(&["import", file.to_str().unwrap()]).ok().trim().to_owned();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let imported = list.as_array().unwrap().iter().find(|c| c["id"] == id.as_str()).expect("listed");
    assert_eq!(imported["title"], "Fix the parser");
    let again = env.run(&["import", file.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&again), @r#"
    exit 3
    --- stderr
    error: summary-only.jsonl is already imported, as 01KDVDQ4K00000000000000001 "Fix the parser"
    hint: --again makes another copy
    "#);
}

/// A subagent run of 16,000 chained sidechain lines imports in linear time (the chain walk
/// counts its steps in a unit test; no timing is asserted here, machines are noisy). Run
/// with --nocapture to see how long it took.
#[test]
fn a_long_sidechain_chain_imports() {
    let n = 16_000;
    let mut session = String::from(
        "{\"type\":\"user\",\"uuid\":\"m0\",\"parentUuid\":null,\"isSidechain\":false,\
         \"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"start\"}}\n",
    );
    for i in 1..n {
        let role = if i % 2 == 1 { "user" } else { "assistant" };
        let parent = if i == 1 { "m0".to_owned() } else { format!("s{}", i - 1) };
        session += &format!(
            "{{\"type\":\"{role}\",\"uuid\":\"s{i}\",\"parentUuid\":\"{parent}\",\"isSidechain\":true,\
             \"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{{\"role\":\"{role}\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"step {i}\"}}]}}}}\n"
        );
    }
    let env = TestEnv::new();
    let file = env.root.join("chain.jsonl");
    std::fs::write(&file, &session).unwrap();
    let start = std::time::Instant::now();
    env.run(&["import", file.to_str().unwrap()]).ok();
    eprintln!("imported a {n}-line sidechain chain in {:?}", start.elapsed());
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let events: Vec<u64> = list.as_array().unwrap().iter().map(|c| c["events"].as_u64().unwrap()).collect();
    assert_eq!(list.as_array().unwrap().len(), 2, "one main conversation and one subagent run: {list}");
    assert_eq!(events.iter().sum::<u64>(), n as u64, "{list}");
}

/// A compaction's summary is stored text too (it may come from a remote): in the Markdown
/// export it cannot close or open the page's folds.
#[test]
fn a_hostile_summary_cannot_break_the_markdown_export() {
    let env = TestEnv::new();
    env.new_conversation("t");
    env.run(&["append", "--user", "hi"]).ok();
    env.run(&["append", "--tool-call", "ls", "--args", "{}", "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "a"]).ok();
    env.run(&["append", "--assistant", "done"]).ok();
    env.run(&["append", "--user", "next"]).ok();
    env.run(&["compact", "--to", "0", "--summary", "ok </details></summary>\n<details><summary>swallowed"]).ok();
    let md = env.run(&["export", "--format", "markdown"]).ok().to_owned();
    insta::assert_snapshot!(md, @"
    # t

    > **Compacted turns 0-0, summarized by user**
    > ok &lt;/details>&lt;/summary>
    > &lt;details>&lt;summary>swallowed

    ## Turn 0

    **User**

    hi

    <details><summary>Tool call: ls (c1)</summary>

    ```json
    {}
    ```

    </details>

    <details><summary>Tool result (c1)</summary>

    ```
    a
    ```

    </details>

    **Assistant**

    done

    ## Turn 1

    **User**

    next
    ");
}

/// The tokens of one import's conversations as stored, and of its source file as Claude Code
/// recorded them: each API message once, by its last line (its output count grows as the
/// message streams, and every line of it repeats the usage).
/// Codex writes a call's token count after the items it counts (0.169: a
/// `token_usage_record` at once, a repeating `token_count` later) or, in 0.39, before
/// them: either way the count goes on the first assistant-side event of its response, with
/// the model of its turn, and a repeated total counts nothing.
#[test]
fn codex_usage_is_kept_on_the_first_event_of_the_call_it_counts() {
    let env = TestEnv::new();
    let placed = |file: &str| -> String {
        let id = env
            .run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()])
            .ok()
            .trim()
            .to_owned();
        let mut out = Vec::new();
        for line in env.run(&["show", &id, "--format", "jsonl"]).ok().lines() {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            let usage =
                e.get("usage").map(|u| format!(" {} {u}", e["model"].as_str().unwrap_or("?"))).unwrap_or_default();
            out.push(format!("{}{usage}", e["type"].as_str().unwrap()));
        }
        out.join("\n")
    };
    insta::assert_snapshot!(placed(crate::follow::CODEX_0169), @r#"
    system
    user
    user
    tool_call gpt-5.1-codex {"input_tokens":1104,"output_tokens":180,"cache_read_tokens":4096,"cache_write_tokens":0,"reasoning_tokens":120}
    tool_result
    tool_call gpt-5.1-codex {"input_tokens":480,"output_tokens":90,"cache_read_tokens":5120,"cache_write_tokens":0,"reasoning_tokens":64}
    tool_result
    assistant gpt-5.1-codex {"input_tokens":396,"output_tokens":60,"cache_read_tokens":5504,"cache_write_tokens":0,"reasoning_tokens":0}
    user
    assistant gpt-5.1-codex {"input_tokens":212,"output_tokens":25,"cache_read_tokens":5888,"cache_write_tokens":0,"reasoning_tokens":0}
    "#);
    let old = placed("../shared/corpus-current/codex/vibecodingtracker__codex-0.39.jsonl");
    insta::assert_snapshot!(old.lines().take(10).collect::<Vec<_>>().join("\n"), @r#"
    user
    user
    reasoning aide-gpt-5 {"input_tokens":141,"output_tokens":810,"cache_read_tokens":5504,"reasoning_tokens":640}
    assistant
    tool_call
    tool_result
    reasoning aide-gpt-5 {"input_tokens":5822,"output_tokens":244,"cache_read_tokens":0,"reasoning_tokens":192}
    assistant
    tool_call
    tool_result
    "#);
}

/// Codex writes no error flag on a command's output, only the exit status in its text: a
/// command that exited 1 is imported as a failed result, so `show` says `error` and `grep
/// --failed` finds it; one that exited 0 stays a success.
#[test]
fn a_codex_command_that_exited_nonzero_is_shown_and_found_as_failed() {
    let fixture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::follow::CODEX_0169)).unwrap();
    let ok = r#"Process exited with code 0\nOriginal token count: 4\nOutput:\n17 notes.txt\n"#;
    let failed =
        r#"Process exited with code 1\nOriginal token count: 9\nOutput:\nwc: notes.txt: No such file or directory\n"#;
    assert!(fixture.contains(ok), "the fixture's second command changed");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rollout-2026-11-28T06-03-43-01a220c0.jsonl");
    std::fs::write(&file, fixture.replace(ok, failed)).unwrap();
    let env = TestEnv::new();
    let id = env.run(&["import", file.to_str().unwrap()]).ok().trim().to_owned();
    let shown = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    let results: Vec<(String, bool)> = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["call_id"].as_str().unwrap().to_owned(), e["is_error"].as_bool().unwrap()))
        .collect();
    assert_eq!(results, [("call_1".to_owned(), false), ("call_2".to_owned(), true)]);
    let text = env.run(&["show", &id]).ok().to_owned();
    assert!(text.contains("exec_command call_1 success"), "{text}");
    assert!(text.contains("exec_command call_2 error"), "{text}");
    // The hit is the second command's result (Codex's item id), alone.
    let found = env.run(&["grep", "--failed", "--format", "json"]).ok().to_owned();
    let hits: Vec<Value> = found.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let hits: Vec<&str> = hits.iter().map(|h| h["event"].as_str().unwrap()).collect();
    assert_eq!(hits, ["fco_01a220c0-9c93-7722-8f92-6269bcf5aba7"], "{found}");
    let found = env.run(&["grep", "--failed", "No such file"]).ok().to_owned();
    assert!(found.contains("wc: notes.txt: No such file or directory"), "{found}");
}

/// A Codex session that marks its turns has its last response kept back while its count
/// may still come (a following read gives it, with its count, or when the turn ends); one
/// that marks none, as Codex 0.39's or another tool's, has nothing kept back, so a file
/// without counts loses no event.
#[test]
fn a_codex_response_waits_for_its_count_only_where_turns_are_marked() {
    let record = |kind: &str, payload: serde_json::Value| {
        serde_json::json!({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}).to_string() + "\n"
    };
    let message = |role: &str, text: &str| {
        record(
            "response_item",
            serde_json::json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}),
        )
    };
    let meta = record("session_meta", serde_json::json!({"id": "s", "cwd": "/tmp"}));
    let started = record("event_msg", serde_json::json!({"type": "task_started"}));
    let done = record("event_msg", serde_json::json!({"type": "task_complete"}));
    let env = TestEnv::new();
    let types = |env: &TestEnv| -> Vec<String> {
        env.run(&["show", "--format", "jsonl"])
            .ok()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rollout.jsonl");
    std::fs::write(&file, format!("{meta}{}{}", message("user", "hi"), message("assistant", "hello"))).unwrap();
    env.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(types(&env), ["user", "assistant"], "no turn marks: nothing waits");

    let env = TestEnv::new();
    let marked = format!("{meta}{started}{}{}", message("user", "hi"), message("assistant", "hello"));
    std::fs::write(&file, &marked).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    assert_eq!(types(&env), ["user"], "the answer waits for its count");
    std::fs::write(&file, format!("{marked}{done}")).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    assert_eq!(types(&env), ["user", "assistant"], "the turn ended without a count");
}

#[test]
fn claude_code_usage_is_kept_and_counts_each_api_message_once() {
    let files = [
        "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "../shared/corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "../shared/corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
        "../shared/corpus-current/claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    ];
    for file in files {
        let expected = crate::usage::source_tokens(file);
        assert!(expected[1] > 0, "{file}: the source records usage");

        // What convo kept, summed the same way over every conversation the import made.
        let env = TestEnv::new();
        env.run(&["import", std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()]).ok();
        let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let mut kept: std::collections::HashMap<String, serde_json::Value> = Default::default();
        for row in &rows {
            for line in env.run(&["show", row["id"].as_str().unwrap(), "--format", "jsonl"]).ok().lines() {
                let event: serde_json::Value = serde_json::from_str(line).unwrap();
                if let (Some(id), Some(usage)) = (event["message_id"].as_str(), event.get("usage")) {
                    assert!(event["model"].is_string(), "{file}: the model is kept beside the usage");
                    kept.insert(id.to_owned(), usage.clone());
                }
            }
        }
        let mut stored = [0u64; 4];
        for usage in kept.values() {
            let keys = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"];
            for (t, key) in stored.iter_mut().zip(keys) {
                *t += usage[key].as_u64().unwrap_or(0);
            }
        }
        assert_eq!(stored, expected, "{file}: input, output, cache read, cache write");
    }
}

/// Gemini CLI's sessions, the corpus's (2026-04) and one 0.61 wrote here
/// (`follow::GEMINI_061`: thoughts, a file read and a command, then resumed and
/// compressed): each message once however often the file writes it, its token count as the
/// usage of its first event, the compression a compaction with its summary, the view sent
/// valid for the providers, and every record left out said in the report.
#[test]
fn gemini_cli_sessions_import_each_message_once_with_its_usage() {
    let files = ["../shared/corpus-current/gemini-cli/vibecodingtracker__gemini.jsonl", crate::follow::GEMINI_061];
    let mut reports = String::new();
    for file in files {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let env = TestEnv::new();
        let out = env.run(&["import", path.to_str().unwrap()]);
        reports += &format!("=== {}\n{}", path.file_name().unwrap().to_str().unwrap(), out.ok_status());
        env.run(&["fsck"]).ok();
        assert_provider_valid(&env);
        // What the file counted, each message's tokens once (by its last record).
        let mut tokens: std::collections::HashMap<String, Value> = Default::default();
        for line in jsonl(&path) {
            if line["type"] == "gemini" && line["tokens"].is_object() {
                tokens.insert(line["id"].as_str().unwrap().to_owned(), line["tokens"].clone());
            }
        }
        let n = |t: &Value, k: &str| t[k].as_u64().unwrap_or(0);
        let expected = tokens.values().fold([0u64; 3], |[i, o, c], t| {
            [
                i + n(t, "input") + n(t, "tool") - n(t, "cached"),
                o + n(t, "output") + n(t, "thoughts"),
                c + n(t, "cached"),
            ]
        });
        let mut kept = [0u64; 3];
        for line in env.run(&["show", "--format", "jsonl"]).ok().lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            if let Some(u) = e.get("usage") {
                assert!(e["model"].is_string(), "{file}: the model is kept beside the usage");
                for (k, key) in kept.iter_mut().zip(["input_tokens", "output_tokens", "cache_read_tokens"]) {
                    *k += u[key].as_u64().unwrap_or(0);
                }
            }
        }
        assert_eq!(kept, expected, "{file}: input, output, cache read");
    }
    insta::assert_snapshot!(reports, @"
    === vibecodingtracker__gemini.jsonl
    Imported vibecodingtracker__gemini.jsonl as gemini-cli (01KDVDQ4K00000000000000001): 28 records read
      events: 2 assistant, 7 reasoning, 12 tool_call, 12 tool_result, 3 user
      turns: 3
      skipped 11: `$set` record
      skipped 2: `info` message (kept with the next event)
      skipped 1: session header
    === gemini-cli-0.61.jsonl
    Imported gemini-cli-0.61.jsonl as gemini-cli (01KDVDQ4K00000000000000002): 29 records read
      events: 2 assistant, 1 reasoning, 4 tool_call, 4 tool_result, 3 user
      turns: 3
      compactions from the source: 1
      skipped 1: Gemini CLI's context message (kept with the next event)
      skipped 15: `$set` record
      skipped 2: message Gemini CLI put among earlier ones (a tool response already imported)
      skipped 1: session header
      skipped 2: tool responses repeating the calls' results (kept with the next event)
    ");
}

/// A Gemini CLI session with a line that is not JSON is refused whole, by `import` and by
/// `import --follow`, and the store is left as it was.
#[test]
fn a_gemini_cli_session_with_a_broken_record_writes_nothing() {
    let env = TestEnv::new();
    env.new_conversation("keep");
    let before = env.snapshot();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::follow::GEMINI_061)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let cut = &lines[6][..lines[6].len() / 2];
    lines[6] = cut;
    let path = env.root.join("session-2026-11-28T07-23-7170941b.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut said = String::new();
    for args in [vec!["import"], vec!["import", "--follow"]] {
        let out = env.run(&[args.as_slice(), &[path.to_str().unwrap()]].concat());
        said += &env.transcript(&out);
        assert!(env.snapshot() == before, "{args:?} changed the store");
    }
    insta::assert_snapshot!(said, @"
    exit 3
    --- stderr
    error: session-2026-11-28T07-23-7170941b.jsonl: not a format convo reads (jsonl: line 1, field `type`: missing; claude-code: line 7: not valid JSON (EOF while parsing an object at line 1 column 392); codex: line 7: not valid JSON (EOF while parsing an object at line 1 column 392); gemini-cli: line 7: not valid JSON (EOF while parsing an object at line 1 column 392); openhands: not one JSON document (trailing characters at line 2 column 1); openai: not one JSON document (trailing characters at line 2 column 1); anthropic: not one JSON document (trailing characters at line 2 column 1))
    hint: nothing was written; --format names the format
    exit 3
    --- stderr
    error: session-2026-11-28T07-23-7170941b.jsonl: --follow reads line-based sessions (claude-code, codex, gemini-cli, jsonl), not an unknown format
    hint: nothing was written; `convo import --again FILE` imports it whole as a new conversation
    ");
}

/// Claude Code 2.1 keeps a subagent's work in `<session>/subagents/agent-<id>.jsonl` beside
/// `<session>.jsonl` (the corpus's agent team, `ef958aa1…`): imported as a folder, or the
/// session first and then the subagent's file, the subagent's conversation hangs under the
/// session's; the subagent's file alone links to nothing.
#[test]
fn a_claude_code_subagent_file_links_to_its_session() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus-current/claude-code");
    let dir = tempfile::tempdir().unwrap();
    let session = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    let agent = format!("{session}/subagents/agent-a4ca7529859c158c2.jsonl");
    std::fs::create_dir_all(dir.path().join(session).join("subagents")).unwrap();
    for file in [format!("{session}.jsonl"), agent.clone()] {
        std::fs::copy(shared.join(&file), dir.path().join(&file)).unwrap();
    }
    let tree = |env: &TestEnv| {
        let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let list = list.as_array().unwrap().clone();
        let index = |id: &Value| list.iter().position(|c| c["id"] == *id);
        list.iter().map(|c| (c["events"].as_u64().unwrap(), index(&c["subagent_of"]))).collect::<Vec<_>>()
    };
    let folder = TestEnv::new();
    folder.run(&["import", dir.path().to_str().unwrap()]).ok();
    // The session (107 events); the agent file's conversation under it (empty: every line
    // of the file is a sidechain), and the agent's run under that.
    assert_eq!(tree(&folder), [(107, None), (56, Some(2)), (0, Some(0))]);

    let by_file = TestEnv::new();
    by_file.run(&["import", dir.path().join(format!("{session}.jsonl")).to_str().unwrap()]).ok();
    by_file.run(&["import", "--follow", dir.path().join(&agent).to_str().unwrap()]).ok();
    assert_eq!(tree(&by_file), tree(&folder));

    let alone = TestEnv::new();
    alone.run(&["import", dir.path().join(&agent).to_str().unwrap()]).ok();
    let alone = tree(&alone);
    let roots: Vec<u64> = alone.iter().filter(|(_, parent)| parent.is_none()).map(|(events, _)| *events).collect();
    assert_eq!((alone.len(), roots), (2, vec![0]));
}

/// Gemini CLI records a shell command that exited non-zero as a successful call (the tool
/// ran) with `Exit Code: N` after its output: convo imports it as failed, so `show` says
/// `error` and `grep --failed` finds it. The fixture is Gemini CLI 0.61's own session of
/// `ls /nonexistent-dir`, recorded against the recording server; handed back to Gemini
/// CLI it is written as Gemini CLI recorded it (its result's `output`, not an `error`).
#[test]
fn a_gemini_cli_command_that_exited_nonzero_is_shown_and_found_as_failed() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gemini-cli-0.61-failed-command.jsonl");
    let env = TestEnv::new();
    let id = env.run(&["import", file.to_str().unwrap()]).ok().trim().to_owned();
    let shown = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    let results: Vec<bool> = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["is_error"].as_bool().unwrap())
        .collect();
    assert_eq!(results, [true]);
    let found = env.run(&["grep", "--failed", "cannot access"]).ok().to_owned();
    assert!(found.contains("/nonexistent-dir"), "{found}");
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = env.command(&["resume", &id, "--in", "gemini-cli"]);
    cmd.current_dir(&work);
    crate::common::run_command(cmd, "").ok();
    let written: Vec<PathBuf> = crate::handoff::files_under(&env.home().join(".gemini/tmp"))
        .into_iter()
        .filter(|f| f.ends_with(".jsonl"))
        .map(|f| env.home().join(".gemini/tmp").join(f))
        .collect();
    let text = std::fs::read_to_string(&written[0]).unwrap();
    assert!(text.contains(r#""response":{"output":"<untrusted_context>\nOutput: ls: cannot access"#), "{text}");
}

/// `--skip-bad-lines` passes over a line that is not JSON in the middle of a session file
/// (which refuses the file without it) and names it in the report; a file that is not there
/// is not found (exit 4), not bad input.
#[test]
fn skip_bad_lines_imports_the_rest_and_names_what_it_skipped() {
    let env = TestEnv::new();
    let line = |uuid: &str, parent: Option<&str>, kind: &str, text: &str| {
        serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
            "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": kind, "content": [{"type": "text", "text": text}]}})
        .to_string()
            + "\n"
    };
    let path = env.root.join("garbled.jsonl");
    let text = line("u1", None, "user", "hello")
        + "{not json\n"
        + &line("a1", Some("u1"), "assistant", "hi")
        + "garbage\n"
        + &line("u2", Some("a1"), "user", "bye");
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();
    let mut said = env.transcript(&env.run(&["import", file]));
    said += &env.transcript(&env.run(&["import", "--skip-bad-lines", file]));
    said += &env.transcript(&env.run(&["import", env.root.join("missing.jsonl").to_str().unwrap()]));
    let said = said.replace(env.root.to_str().unwrap(), "[ROOT]");
    insta::assert_snapshot!(said, @r#"
    exit 3
    --- stderr
    error: garbled.jsonl: not a format convo reads (jsonl: line 1, field `content`: missing; claude-code: line 2: not valid JSON (key must be a string at line 1 column 2); codex: line 2: not valid JSON (key must be a string at line 1 column 2); gemini-cli: line 2: not valid JSON (key must be a string at line 1 column 2); openhands: not one JSON document (trailing characters at line 2 column 1); openai: not one JSON document (trailing characters at line 2 column 1); anthropic: not one JSON document (trailing characters at line 2 column 1))
    hint: nothing was written; --format names the format
    exit 0
    --- stdout
    01KDVDRZ600000000000000001
    --- stderr
    Imported garbled.jsonl as claude-code (01KDVDRZ600000000000000001): 3 records read
      events: 1 assistant, 2 user
      turns: 2
      skipped 2 lines (not JSON): 2, 4
    exit 4
    --- stderr
    error: [ROOT]/missing.jsonl: No such file or directory (os error 2)
    "#);
}

/// Errors about the events of a file name its line, blank lines counted.
#[test]
fn an_error_about_an_imported_event_names_the_files_line() {
    let env = TestEnv::new();
    let path = env.root.join("events.jsonl");
    let text = "{\"id\":\"e1\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":\"hi\"}\n\n\n\
        {\"id\":\"e2\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"tool_result\",\"call_id\":\"c9\",\"content\":\"x\"}\n";
    std::fs::write(&path, text).unwrap();
    let out = env.run(&["import", "--format", "jsonl", path.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 3
    --- stderr
    error: events.jsonl: input line 4, field `call_id`: no tool_call with call_id `c9` in this conversation
    hint: nothing was written; --format names the format
    "#);
}

/// The HTML export's header names every model that answered, in the order of first use.
#[test]
fn the_html_header_names_every_model_used_in_order() {
    let env = TestEnv::new();
    env.new_conversation("three models");
    let answer = |text: &str, model: &str| serde_json::json!({"type": "assistant", "content": text, "model": model});
    let jsonl = [
        serde_json::json!({"type": "user", "content": "plan it"}),
        answer("a plan", "claude-opus-4-1"),
        serde_json::json!({"type": "user", "content": "do it"}),
        answer("done", "claude-sonnet-4-5"),
        answer("and checked", "claude-opus-4-1"),
        serde_json::json!({"type": "user", "content": "name it"}),
        answer("a <name>", "gpt-5-mini<b>"),
    ]
    .iter()
    .map(|e| format!("{e}\n"))
    .collect::<String>();
    env.run_stdin(&["append"], &jsonl).ok();
    let html = env.run(&["export", "--format", "html"]).ok().to_owned();
    let facts = &html[html.find("<dl class=\"facts\">").unwrap()..];
    let facts = &facts[..facts.find("<div><dt>Turns").unwrap()];
    assert_eq!(
        facts,
        "<dl class=\"facts\"><div><dt>Models</dt><dd>claude-opus-4-1 · claude-sonnet-4-5 · gpt-5-mini&lt;b&gt;</dd></div>"
    );
}

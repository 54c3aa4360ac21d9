//! Sharing through real git servers on loopback: a bare repository by path and by file://,
//! `git daemon`, and smart HTTP through `git http-backend`. Nothing may be lost or doubled.

use std::collections::BTreeSet;

use crate::common::TestEnv;
use crate::common::githttp::{Daemon, Http};
use crate::common::{TwoPeople, bare, two_people_on_disk};

/// Every `(conversation, event id)` of a store, and every user message.
fn contents(env: &TestEnv) -> (BTreeSet<(String, String)>, Vec<String>) {
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut pairs = BTreeSet::new();
    let mut messages = Vec::new();
    for c in list.as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        for line in env.run(&["show", id, "--format", "jsonl"]).ok().lines() {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(pairs.insert((id.to_owned(), e["id"].as_str().unwrap().to_owned())), "duplicate event in {id}");
            if e["type"] == "user" {
                messages.push(e["content"].as_str().unwrap().to_owned());
            }
        }
    }
    messages.sort();
    (pairs, messages)
}

fn clone_into(env: &TestEnv, url: &str) {
    let out = env.run(&["clone", url, env.store.to_str().unwrap()]);
    out.ok();
}

/// Clone, append on both sides (one conversation on both), a rejected push, pull, push,
/// pull: both stores end with the union of every event, once.
fn round_trip(url: &str) {
    let a = TestEnv::new();
    let shared = a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();

    let b = TestEnv::bare_at(100);
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();

    a.run(&["append", "--user", "from a"]).ok();
    a.new_conversation("only a");
    a.run(&["append", "--user", "a alone"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.new_conversation("only b");
    b.run(&["append", "--user", "b alone"]).ok();

    a.run(&["push"]).ok();
    let rejected = b.run(&["push"]);
    // One snapshot for every transport: the remote's URL is redacted.
    // (insta::allow_duplicates: four tests assert these same inline snapshots.)
    let hub_dir = |text: String| text.replace(url, "[URL]");
    insta::allow_duplicates! {
        insta::assert_snapshot!(hub_dir(b.transcript(&rejected)), @"
            exit 6
            --- stderr
            error: the remote `origin` has commits this store does not have
            hint: run `convo pull` to bring them in (nothing is lost), then push again
            ");
        let pulled = b.run(&["pull"]);
        insta::assert_snapshot!(hub_dir(b.transcript(&pulled)), @r#"
        exit 0
        --- stderr
        Merged 6cc440d: 2 conversations (1 new, 1 updated), 2 events; 1 fork made
        diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line keeps the id; your 1 event is in fork 01KE65AM200000000000000001
        "#);
        b.run(&["push"]).ok();
        insta::assert_snapshot!(hub_dir(a.transcript(&a.run(&["pull"]))), @"
        exit 0
        --- stderr
        Fast-forward to 6cc440d: 2 conversations (2 new), 3 events
        ");
    }

    let (pairs_a, messages_a) = contents(&a);
    let (pairs_b, messages_b) = contents(&b);
    assert_eq!(pairs_a, pairs_b, "both stores hold the same events");
    // shared keeps "first" + "from a"; the fork holds "first" + "from b"; one each alone.
    assert_eq!(messages_a, ["a alone", "b alone", "first", "first", "from a", "from b"]);
    assert_eq!(messages_a, messages_b);
    let forked: serde_json::Value =
        serde_json::from_str(&b.git(&["show", &format!("HEAD:{}", fork_meta(&b))])).unwrap();
    assert_eq!(forked["forked_from"], serde_json::json!({"id": shared, "turn": 1}));
    for env in [&a, &b] {
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
    }
    // The active conversation is untouched by pull.
    assert!(b.run(&["show", "--format", "jsonl"]).ok().contains("b alone"));
}

/// The path of the diverged fork's meta.json.
fn fork_meta(env: &TestEnv) -> String {
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let fork = list.as_array().unwrap().iter().find(|c| c["title"] == "shared (diverged)").expect("a fork");
    format!("{}/meta.json", crate::common::conversation_dir(fork["id"].as_str().unwrap()))
}

#[test]
fn round_trip_through_a_bare_repository_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    round_trip(hub.to_str().unwrap());
}

#[test]
fn round_trip_through_file_url() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    round_trip(&format!("file://{}", hub.display()));
}

#[test]
fn round_trip_through_git_daemon() {
    let dir = tempfile::tempdir().unwrap();
    bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    round_trip(&format!("{}/hub.git", daemon.url));
}

#[test]
fn round_trip_through_smart_http() {
    let dir = tempfile::tempdir().unwrap();
    bare(dir.path(), "hub");
    let http = Http::start(dir.path(), None);
    round_trip(&format!("{}/hub.git", http.url));
}

/// A deterministic fake secret: `len` characters of `alphabet`, never a real key.
fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            chars[((x >> 33) % chars.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `(text holding one secret, the rule that must name it)`, one of each kind, seeded by `n`.
pub(crate) fn planted(n: u64) -> Vec<(String, &'static str)> {
    let b64 = |s: &str| {
        // A tiny standard base64 encoder: the test does not trust the code under test.
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in s.as_bytes().chunks(3) {
            let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
            let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                out.push(if i <= chunk.len() { A[(v >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
            }
        }
        out
    };
    let s = n * 100;
    vec![
        (format!("my token ghp_{} ok", fake(ALNUM, 36, s + 1)), "github-pat"),
        (format!("AKIA{}", fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, s + 2)), "aws-access-token"),
        (format!("charge with sk_live_{}", fake(ALNUM, 24, s + 3)), "stripe-access-token"),
        (format!("sk-ant-api03-{}", fake(ALNUM, 40, s + 4)), "anthropic-key-prefix"),
        (format!("use sk-proj-{} here", fake(ALNUM, 40, s + 5)), "openai-key-prefix"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----".to_owned(), "private-key-header"),
        (format!("curl -H 'Authorization: Bearer {}' x", fake(ALNUM, 32, s + 6)), "bearer-token"),
        (format!("the .env has\nDB_PASSWORD={}\nPORT=1", fake(ALNUM, 14, s + 7)), "password-assignment"),
        (format!("try  export AWS_SECRET_KEY=\"{}\" then", fake(ALNUM, 20, s + 8)), "secret-assignment"),
        (format!("llm:\n  api_key: {}\n", fake(ALNUM, 24, s + 9)), "secret-assignment"),
        (format!("postgres://admin:{}@db.internal:5432/app", fake(ALNUM, 12, s + 10)), "url-credentials"),
        (format!("blob {} end", b64(&format!("ghp_{}", fake(ALNUM, 36, s + 11)))), "github-pat (base64)"),
        (format!("https%3A%2F%2Fbob%3A{}%40example.com", fake(ALNUM, 12, s + 12)), "url-credentials (URL-encoded)"),
    ]
}

/// Every kind of secret in every place an event holds text (content, JSON nested in tool
/// arguments, tool results, unknown fields) and in a title is refused in one push, each
/// finding named by place and rule, the secret never printed, the remote unchanged.
#[test]
fn secrets_are_refused_before_they_leave() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let env = TestEnv::new();
    let id = env.new_conversation("keys");
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["append", "--user", "clean text only"]).ok();
    env.run(&["push"]).ok();
    let pushed = |env: &TestEnv| env.git(&["ls-remote", hub.to_str().unwrap(), "refs/heads/main"]);
    let before = pushed(&env);

    // (line, field, kind) per planted secret: each kind in each place.
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    let mut secrets = Vec::new();
    for (place, n) in ["content", "arguments.input", "tool result", "x_note"].into_iter().zip(1..) {
        for (i, (text, kind)) in planted(n).into_iter().enumerate() {
            let line = match place {
                "content" => serde_json::json!({"type": "user", "content": text}),
                "arguments.input" => serde_json::json!({"type": "tool_call", "call_id": format!("c{n}-{i}"),
                    "name": "run", "arguments": serde_json::json!({"input": text}).to_string()}),
                "tool result" => {
                    lines.push(serde_json::json!({"type": "tool_call", "call_id": format!("c{n}-{i}"),
                        "name": "read", "arguments": {}}));
                    expected.push(None);
                    serde_json::json!({"type": "tool_result", "call_id": format!("c{n}-{i}"), "content": text, "is_error": false})
                }
                _ => serde_json::json!({"type": "user", "content": "see note", "x_note": text}),
            };
            lines.push(line);
            let field = if place == "tool result" { "content" } else { place };
            expected.push(Some((field, kind)));
            secrets.push(text);
        }
    }
    let stdin: String = lines.iter().map(|l| format!("{l}\n")).collect();
    env.run_stdin(&["append"], &stdin).ok();
    let events: Vec<serde_json::Value> =
        env.run(&["show", "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 1 + expected.len());
    let title_key = format!("sk_live_{}", fake(ALNUM, 24, 999));
    let titled = env.new_conversation(&format!("deploy with {title_key}"));

    let out = env.run(&["push"]);
    let stderr = out.fails_with(3);
    let mut planted_count = 0;
    for (event, want) in events[1..].iter().zip(&expected) {
        let Some((field, kind)) = want else { continue };
        // One hint per place, naming every rule that matched there.
        let place = format!("hint: conversation {id} event {} {field}: ", event["id"].as_str().unwrap());
        let found = stderr.lines().find_map(|l| l.strip_prefix(&place));
        assert!(found.is_some_and(|kinds| kinds.split(", ").any(|k| k == *kind)), "missing {place}{kind} in\n{stderr}");
        planted_count += 1;
    }
    for line in [
        format!("hint: conversation {titled} meta.json title: stripe-access-token\n"),
        "message: stripe-access-token\n".to_owned(),
    ] {
        assert!(stderr.contains(&line), "missing {line:?} in\n{stderr}");
        planted_count += 1;
    }
    assert!(planted_count >= 30, "{planted_count}");
    assert!(stderr.starts_with("error: refusing to push: "), "{stderr}");
    assert!(stderr.ends_with("hint: --allow-secrets pushes anyway\n"), "{stderr}");
    assert!(stderr.contains("hint: nothing was pushed; `convo redact --secrets` replaces them"), "{stderr}");
    for secret in secrets.iter().chain([&title_key]) {
        for word in secret.split_whitespace().filter(|w| w.len() >= 12) {
            assert!(!stderr.contains(word), "the secret {word} was printed");
        }
    }
    assert_eq!(pushed(&env), before, "nothing reached the remote");
    env.run(&["push", "--allow-secrets"]).ok();
    assert_ne!(pushed(&env), before);
    // What was published is not scanned again: the next push is clean.
    env.run(&["switch", &id]).ok();
    env.run(&["append", "--user", "clean again"]).ok();
    env.run(&["push"]).ok();
}

/// A commit message, `convo.toml`, and a file name recorded by import are scanned too.
#[test]
fn secrets_outside_events_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let env = TestEnv::new();
    env.new_conversation("c");
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["push"]).ok();
    let pushed = || env.git(&["ls-remote", hub.to_str().unwrap(), "refs/heads/main"]);
    let before = pushed();
    let commit = |args: &[&str]| {
        let mut all = vec!["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-q"];
        all.extend(args);
        env.git(&all)
    };

    // git commits with the real time: its commit ids are not fixed.
    let head = || env.git(&["rev-parse", "--short", "HEAD"]).trim().to_owned();
    let token = format!("ghp_{}", fake(ALNUM, 36, 7001));
    commit(&["--allow-empty", "-m", &format!("notes\n\ntoken {token}")]);
    let out = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&out).replace(&head(), "[HEAD]"), @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: commit [HEAD] message: github-pat
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    env.git(&["reset", "-q", "--hard", "HEAD~1"]);

    std::fs::write(env.store.join("convo.toml"), format!("[llm]\napi_key = \"{}\"\n", fake(ALNUM, 24, 7002))).unwrap();
    env.git(&["add", "convo.toml"]);
    commit(&["-m", "config"]);
    let out = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&out).replace(&head(), "[HEAD]"), @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: convo.toml: generic-api-key, secret-assignment
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    env.git(&["reset", "-q", "--hard", "HEAD~1"]);

    let file = dir.path().join(format!("session-{token}.json"));
    std::fs::write(&file, r#"{"messages": [{"role": "user", "content": "hello"}]}"#).unwrap();
    // A file is titled by its first prompt, not its name: the token reaches the title (and
    // the commit's subject) only when asked for.
    env.run(&["import", "--title", &format!("deploy {token}"), file.to_str().unwrap()]).ok();
    let out = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&out).replace(&head(), "[HEAD]"), @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: conversation 01KDVE09J00000000000000002 meta.json title: github-pat
    hint: conversation 01KDVE09J00000000000000002 meta.json source.file: github-pat
    hint: commit [HEAD] message: github-pat
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    assert!(!out.stderr.contains(&token));
    assert_eq!(pushed(), before, "nothing reached the remote");
}

#[test]
fn a_server_vanishing_mid_fetch_leaves_the_store_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    bare(dir.path(), "hub");
    let good = Http::start(dir.path(), None);
    let cutting = Http::start(dir.path(), Some(200));
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["remote", "add", "origin", &format!("{}/hub.git", good.url)]).ok();
    let big = "x".repeat(50_000);
    a.run(&["append", "--user", &big[..1000]]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    clone_into(&b, &format!("{}/hub.git", good.url));
    for i in 0..5 {
        a.run_stdin(&["append"], &format!("{{\"type\":\"user\",\"content\":\"{i}{big}\"}}\n")).ok();
    }
    a.run(&["push"]).ok();
    b.run(&["remote", "set-url", "origin", &format!("{}/hub.git", cutting.url)]).ok();
    let before = b.snapshot();
    let out = b.run(&["pull"]);
    assert!(out.fails_with(6).starts_with("error: git fetch: "), "{}", out.stderr);
    let after = b.snapshot();
    let changed: Vec<_> = after.keys().chain(before.keys()).filter(|k| before.get(*k) != after.get(*k)).collect();
    assert!(changed.is_empty(), "a failed fetch changed the store: {changed:?}");
    b.run(&["fsck"]).ok();
}

/// Anything else in the store (a folder added with git) merges with its kind intact, and
/// fsck names it: another store would refuse to pull it.
#[test]
fn a_folder_added_with_git_survives_a_merge_and_fsck_names_it() {
    let TwoPeople { a, b, hub: _, url, served: _served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("c");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    clone_into(&b, url);
    std::fs::create_dir_all(a.store.join("notes")).unwrap();
    std::fs::write(a.store.join("notes/x.txt"), "by hand\n").unwrap();
    a.git(&["add", "notes"]);
    a.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "notes"]);
    b.run(&["switch", "c"]).ok();
    b.run(&["append", "--user", "two"]).ok();
    b.run(&["push"]).ok();
    assert!(a.run(&["pull"]).ok_status().starts_with("Merged "));
    a.git(&["fsck", "--strict", "--no-progress"]);
    assert_eq!(std::fs::read_to_string(a.store.join("notes/x.txt")).unwrap(), "by hand\n");
    a.run(&["append", "--user", "three"]).ok();
    insta::assert_snapshot!(a.transcript(&a.run(&["fsck"])), @"
        exit 1
        --- stdout
        notes: not a file convo writes (only conversations/ and convo.toml belong at the top of a store)
        --- stderr
        error: 1 problem found
        ");
    assert_eq!(a.git_status(), "");
}

/// The fork a pull makes of a conversation appended to on both sides holds the local events,
/// so its log goes back through the merge into the commits that wrote them.
#[test]
fn log_of_a_diverged_fork_reaches_back_through_the_merge() {
    let TwoPeople { a, b, hub: _, url, served: _served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["push"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.run(&["pull"]).ok();

    let meta = fork_meta(&b);
    let fork = meta.split('/').nth(2).unwrap();
    // The merge, b's own append (now the fork's), then the history both sides share.
    insta::assert_snapshot!(b.run(&["log", fork, "--oneline", "--color", "never"]).ok(), @r#"
    39c3848 2026-01-05 merge: origin/main (1 conversation updated, 1 diverged into forks)
    4246ed9 2026-01-05 append: "shared" turn 1 (+1 event) [2 turns, 2 events, ~3 tokens (chars/4)]
    09dd0c6 2026-01-01 append: "shared" turn 0 (+1 event) [1 turn, 1 event, ~2 tokens (chars/4)]
    bf209d3 2026-01-01 new: "shared" [0 turns, 0 events, ~0 tokens (chars/4)]
    "#);
}

/// A fetch goes through a quarantine repository, but the store's own git config (credential
/// helpers, http settings, protocol rules) still applies, as to a plain `git fetch`: here a
/// rule that forbids the file transport, which the quarantine alone would not know.
#[test]
fn the_stores_own_git_config_applies_to_a_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::new();
    b.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    b.git(&["config", "protocol.file.allow", "never"]);
    let refused = b.run(&["pull"]);
    assert_eq!(refused.fails_with(6).lines().next(), Some("error: git fetch: transport 'file' not allowed"));
    b.git(&["config", "--unset", "protocol.file.allow"]);
    assert!(b.run(&["pull"]).ok_status().starts_with("Fast-forward to "));
    assert!(b.run(&["show", "c", "--format", "jsonl"]).ok().contains("\"one\""));
}

/// Issue 12: `fetch` says what it brought and a push with nothing new says so, as git does;
/// `pull` says it on stderr, and `-q` silences it.
#[test]
fn fetch_and_push_report_what_they_did() {
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = bare(hub_dir.path(), "hub.git");
    let url = hub.to_str().unwrap();
    let a = TestEnv::new();
    a.new_conversation("shared");
    a.run(&["remote", "add", "origin", url]).ok();
    let mut said = String::new();
    let mut run = |env: &TestEnv, args: &[&str]| {
        let out = env.run(args);
        said += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&out).replace(url, "[HUB]"));
    };
    run(&a, &["fetch"]);
    run(&a, &["push"]);
    run(&a, &["push"]);
    run(&a, &["fetch"]);
    let b = TestEnv::bare_at(100);
    b.run(&["clone", url, b.store.to_str().unwrap()]).ok();
    b.run(&["switch", "shared"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.run(&["push"]).ok();
    run(&a, &["fetch"]);
    run(&a, &["-q", "fetch"]);
    run(&a, &["-q", "pull"]);
    run(&a, &["-q", "pull"]);
    run(&a, &["pull"]);
    insta::assert_snapshot!(said, @"
    $ convo fetch
    exit 0
    --- stderr
    origin has no main branch yet: nothing to fetch

    $ convo push
    exit 0
    --- stderr
    Pushed to origin: 1 conversation (1 new), 0 events

    $ convo push
    exit 0
    --- stderr
    Everything up-to-date

    $ convo fetch
    exit 0
    --- stderr
    origin/main is up to date (bf209d3)

    $ convo fetch
    exit 0
    --- stderr
    origin/main: bf209d3..28befb0

    $ convo -q fetch
    exit 0

    $ convo -q pull
    exit 0

    $ convo -q pull
    exit 0

    $ convo pull
    exit 0
    --- stderr
    Already up to date.
    ");
}

/// `sync` in `env` with `gitconfig` as git's global config: how the race tests give the
/// hub's `git upload-pack` a `uploadpack.packObjectsHook`, which git reads from no other
/// place than the global or system config.
fn sync_with_global_config(env: &TestEnv, gitconfig: &std::path::Path) -> crate::common::Run {
    let mut command = env.command(&["sync"]);
    command.env("GIT_CONFIG_GLOBAL", gitconfig);
    crate::common::run_command(command, "")
}

/// A hub's `packObjectsHook` that runs `script` (sh) each time the hub serves a fetch, then
/// packs as git would: it runs after the fetching side has seen the hub's refs, so a ref it
/// moves is moved between that fetch and the push after it, which is the race `sync` meets
/// when someone pushes in between. Only fetches from the hub itself run it (convo's local
/// copy out of its quarantine is a fetch too). Returns the global git config naming it.
fn on_each_fetch_from(hub: &std::path::Path, script: &str) -> std::path::PathBuf {
    let dir = hub.parent().unwrap();
    let hook = dir.join("pack-objects-hook");
    let hub = hub.canonicalize().unwrap();
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nexport GIT_DIR='{hub}'\nif [ \"$(pwd -P)\" = '{hub}' ]; then\n{script}\nfi\nunset GIT_DIR\nexec \"$@\"\n",
            hub = hub.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.join("gitconfig");
    std::fs::write(&config, format!("[uploadpack]\n\tpackObjectsHook = {}\n", hook.display())).unwrap();
    config
}

/// The event ids of the hub's main branch, through a fresh clone.
fn hub_contents(hub: &std::path::Path) -> (BTreeSet<(String, String)>, Vec<String>) {
    let reader = TestEnv::bare_at(500);
    clone_into(&reader, hub.to_str().unwrap());
    contents(&reader)
}

/// Nothing to do: one line on stderr, nothing under -q, and neither side changes.
#[test]
fn sync_with_nothing_to_do_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    // A new store and an empty hub: no commit on either side.
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 0
    --- stderr
    Already in sync with origin.
    ");
    a.new_conversation("c");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["push"]).ok();
    let before = a.snapshot();
    let tip = a.git(&["ls-remote", hub.to_str().unwrap()]);
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 0
    --- stderr
    Already in sync with origin.
    ");
    insta::assert_snapshot!(a.transcript(&a.run(&["sync", "-q"])), @"exit 0");
    assert_eq!(a.snapshot(), before, "the store is unchanged");
    assert_eq!(a.git(&["ls-remote", hub.to_str().unwrap()]), tip, "the hub is unchanged");
}

/// Two machines append to one conversation and each to one of its own; each syncs: the
/// first sends its turns out, the second brings them in (forking the conversation both
/// appended to, as `pull` does) and sends its own, and a third sync brings the first up to
/// date. All three end with the same events, once each.
#[test]
fn sync_brings_turns_in_and_sends_turns_out() {
    let TwoPeople { a, b, hub, url, served: _served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 0
    --- stderr
    Synced with origin: nothing in; out 1 conversation (1 new), 1 event
    ");
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();

    a.run(&["append", "--user", "from a"]).ok();
    a.new_conversation("only a");
    a.run(&["append", "--user", "a alone"]).ok();
    a.run(&["append", "--assistant", "a answers"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.new_conversation("only b");
    b.run(&["append", "--user", "b alone"]).ok();

    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 0
    --- stderr
    Synced with origin: nothing in; out 2 conversations (1 new, 1 updated), 3 events
    ");
    insta::assert_snapshot!(b.transcript(&b.run(&["sync"])), @r#"
    exit 0
    --- stderr
    Synced with origin: in 2 conversations (1 new, 1 updated), 3 events; out 2 conversations (2 new), 3 events; 1 fork made
    diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line keeps the id; your 1 event is in fork 01KE658SF00000000000000001
    "#);
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 0
    --- stderr
    Synced with origin: in 2 conversations (2 new), 3 events; nothing out
    ");
    insta::assert_snapshot!(b.transcript(&b.run(&["sync"])), @"
    exit 0
    --- stderr
    Already in sync with origin.
    ");
    let (pairs, messages) = contents(&a);
    assert_eq!(messages, ["a alone", "b alone", "first", "first", "from a", "from b"]);
    assert_eq!(contents(&b).0, pairs);
    assert_eq!(hub_contents(&hub).0, pairs);
    for env in [&a, &b] {
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
    }
}

/// Someone pushes between our pull and our push: git rejects the push (the hub's branch is
/// not where our pull left it), and sync pulls again and pushes again. The other clone's
/// push is made to a side branch first and moved onto main by the hub while it serves our
/// first fetch, so it lands at the same moment every run.
#[test]
fn sync_pulls_again_when_someone_pushed_in_between() {
    let TwoPeople { a, b, hub, url, served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();
    b.run(&["append", "--user", "b before"]).ok();
    b.run(&["push"]).ok();
    // The push that lands in between: ready on a side branch, moved onto main by the hub.
    b.new_conversation("b between");
    b.run(&["append", "--user", "b in between"]).ok();
    b.git(&["push", "--quiet", "origin", "HEAD:refs/heads/between"]);
    a.new_conversation("only a");
    a.run(&["append", "--user", "a alone"]).ok();
    let moved = served.dir().join("moved");
    let config = on_each_fetch_from(
        &hub,
        &format!(
            "if [ ! -e '{m}' ]; then touch '{m}'; git update-ref refs/heads/main refs/heads/between; fi",
            m = moved.display()
        ),
    );

    let out = sync_with_global_config(&a, &config);
    insta::assert_snapshot!(a.transcript(&out), @"
    exit 0
    --- stderr
    Synced with origin: in 2 conversations (1 new, 1 updated), 2 events; out 1 conversation (1 new), 1 event; pushed 2 times, the remote moved in between
    ");
    assert!(moved.exists(), "the hub moved its branch during the first fetch");
    let (pairs, messages) = contents(&a);
    assert_eq!(messages, ["a alone", "b before", "b in between", "first"]);
    assert_eq!(hub_contents(&hub).0, pairs, "the hub has everything a has");
    a.run(&["fsck"]).ok();
    assert_eq!(a.git_status(), "");
}

/// A hub that moves every time it is fetched from (someone always pushing in between):
/// three pushes, then an error that says the remote refused, exit 6. What was pulled stays;
/// nothing of ours reached the hub.
#[test]
fn sync_gives_up_when_the_remote_keeps_moving() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let url = hub.to_str().unwrap();
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    a.run(&["append", "--user", "never arrives"]).ok();
    let fetches = dir.path().join("fetches");
    // A new commit on main (same tree, another tool's) after each fetch has seen the old one;
    // and one before the first, so that every fetch has something to bring (a fetch that
    // brings nothing packs nothing, and the hook runs only when the hub packs).
    let someone_pushes = "export GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@x GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@x\n\
         next=$(git commit-tree -p main -m 'someone else' 'main^{tree}') && git update-ref refs/heads/main \"$next\"";
    let config = on_each_fetch_from(&hub, &format!("echo fetch >> '{}'\n{someone_pushes}", fetches.display()));
    let ok = std::process::Command::new("sh")
        .args(["-c", someone_pushes])
        .env("GIT_DIR", &hub)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let out = sync_with_global_config(&a, &config);
    insta::assert_snapshot!(a.transcript(&out), @"
    exit 6
    --- stderr
    error: the remote `origin` refused the push 3 times: someone pushed to it after each of our pulls
    hint: nothing was pushed; what was pulled is kept (nothing is lost)
    hint: run `convo sync` again later
    ");
    assert_eq!(std::fs::read_to_string(&fetches).unwrap(), "fetch\n".repeat(3), "three pulls, three pushes");
    assert!(!hub_contents(&hub).1.contains(&"never arrives".to_owned()));
    assert!(a.run(&["show", "c", "--format", "jsonl"]).ok().contains("never arrives"));
    a.run(&["fsck"]).ok();
}

/// A hub whose own rules turn the push down (a `pre-receive` hook that always fails) is
/// not racing anyone: one push, an error that says the remote refused and git's reason,
/// exit 6, the hub unchanged.
#[test]
fn sync_stops_when_the_remote_refuses_the_push() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let url = hub.to_str().unwrap();
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    a.run(&["append", "--user", "refused"]).ok();
    let hook = hub.join("hooks/pre-receive");
    let tries = dir.path().join("tries");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho push >> '{}'\necho 'no pushes today' >&2\nexit 1\n", tries.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tip = a.git(&["ls-remote", url]);
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 6
    --- stderr
    error: the remote `origin` refused the push: pre-receive hook declined
    hint: its own rules (a hook, a protected branch, permissions) decide what it takes; nothing was pushed
    ");
    assert_eq!(std::fs::read_to_string(&tries).unwrap(), "push\n", "not retried");
    assert_eq!(a.git(&["ls-remote", url]), tip, "the hub is unchanged");
    // `push` says the same.
    insta::assert_snapshot!(a.transcript(&a.run(&["push"])), @"
    exit 6
    --- stderr
    error: the remote `origin` refused the push: pre-receive hook declined
    hint: its own rules (a hook, a protected branch, permissions) decide what it takes; nothing was pushed
    ");
}

/// A remote name the store does not have: one line and a hint, exit 4, nothing written.
#[test]
fn sync_with_an_unknown_remote_changes_nothing() {
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["append", "--user", "one"]).ok();
    let before = a.snapshot();
    insta::assert_snapshot!(a.transcript(&a.run(&["sync", "upstream"])), @"
    exit 4
    --- stderr
    error: no remote named `upstream`
    hint: `convo remote add NAME URL`; `convo remote` lists them
    ");
    insta::assert_snapshot!(a.transcript(&a.run(&["sync"])), @"
    exit 4
    --- stderr
    error: no remote named `origin`
    hint: `convo remote add NAME URL`; `convo remote` lists them
    ");
    assert_eq!(a.snapshot(), before, "the store is unchanged");
}

/// The push's secret scan holds for sync: refused with push's hints, exit 3, nothing sent;
/// `--allow-secrets` sends it.
#[test]
fn sync_refuses_secrets_as_push_does() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let url = hub.to_str().unwrap();
    let a = TestEnv::new();
    let id = a.new_conversation("c");
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["sync"]).ok();
    let tip = a.git(&["ls-remote", url]);
    let token = format!("ghp_{}", fake(ALNUM, 36, 7));
    a.run(&["append", "--user", &format!("my token {token}")]).ok();
    let out = a.run(&["sync"]);
    let event = a.run(&["show", "--format", "jsonl"]).ok().lines().last().unwrap().to_owned();
    let event: serde_json::Value = serde_json::from_str(&event).unwrap();
    let text = a.transcript(&out).replace(&id, "[ID]").replace(event["id"].as_str().unwrap(), "[EVENT]");
    insta::assert_snapshot!(text, @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: conversation [ID] event [EVENT] content: github-pat
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    assert!(!out.stderr.contains(&token));
    assert_eq!(a.git(&["ls-remote", url]), tip, "nothing reached the hub");
    insta::assert_snapshot!(a.transcript(&a.run(&["sync", "--allow-secrets"])), @"
    exit 0
    --- stderr
    Synced with origin: nothing in; out 1 conversation (1 updated), 1 event
    ");
}

/// `convo -C store pull` and `fetch` with a store path relative to the current directory
/// (or `CONVO_DIR` relative) bring the hub's turns in, as an absolute path does: the
/// quarantine git fetches into is named absolutely.
#[test]
fn a_relative_store_path_pulls_and_fetches() {
    let a = TestEnv::new();
    let hub = bare(&a.root, "hub");
    let url = hub.to_str().unwrap();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    clone_into(&b, url);
    a.run(&["append", "--user", "second"]).ok();
    a.run(&["push"]).ok();

    // The sealed command runs in b's root, where the store is the folder `store`.
    let mut fetch = b.command_without_store(&["-C", "store", "fetch"]);
    fetch.env_remove("CONVO_DIR");
    crate::common::run_command(fetch, "").ok();
    let mut pull = b.command_without_store(&["pull"]);
    pull.env("CONVO_DIR", "store");
    crate::common::run_command(pull, "").ok();
    let (_, messages) = contents(&b);
    assert_eq!(messages, ["first", "second"]);
}

#[test]
fn a_relative_remote_path_is_taken_from_the_current_directory() {
    let a = TestEnv::new();
    // The sealed command runs in a's root; the store is its folder `store`.
    let hub = bare(&a.root, "hub");
    a.new_conversation("shared");
    a.run(&["remote", "add", "origin", "hub.git"]).ok();
    assert_eq!(a.run(&["remote"]).ok(), format!("origin\t{}\n", hub.display()));
    // git's habit: `remote -v` lists the same.
    assert_eq!(a.run(&["remote", "-v"]).ok(), format!("origin\t{}\n", hub.display()));
    a.run(&["push"]).ok();
    a.run(&["remote", "set-url", "origin", "./hub.git"]).ok();
    assert_eq!(a.run(&["remote"]).ok(), format!("origin\t{}\n", hub.display()));
    // ssh's host:path and URLs are kept as written.
    a.run(&["remote", "add", "other", "git@example.com:team/hub.git"]).ok();
    a.run(&["remote", "set-url", "other", "file://hub.git"]).ok();
    assert!(a.run(&["remote"]).ok().contains("other\tfile://hub.git\n"));

    // A clone of a hub that is not there names the URL, not remotes it has none of.
    let b = TestEnv::bare_at(100);
    let clone = b.run(&["clone", "missing.git", b.store.to_str().unwrap()]);
    let said = clone.fails_with(6);
    assert!(said.starts_with("error: git clone: "), "{said}");
    assert!(said.contains("hint: check the URL: a path, file://"), "{said}");
    assert!(!said.contains("convo remote"), "{said}");
}

/// A git that speaks another language (its stderr rewritten, its exit codes kept, as a
/// translated git's are): pulling from or syncing with an empty hub brings nothing and
/// exits 0, decided by git's exit codes, and every git whose words convo reads runs in
/// the C locale.
#[test]
fn an_empty_hub_brings_nothing_whatever_language_git_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    let real =
        String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout)
            .unwrap();
    let bin = a.root.join("translated-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = a.root.join("git-calls.log");
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             echo \"LC_ALL=${{LC_ALL:-}} $*\" >> '{log}'\n\
             err=$(mktemp)\n\
             '{real}' \"$@\" 2>\"$err\"\n\
             code=$?\n\
             sed -e \"s/fatal:/schwerwiegend:/\" -e \"s/couldn't find remote ref/Konnte Remote-Referenz nicht finden/\" \"$err\" >&2\n\
             rm -f \"$err\"\n\
             exit $code\n",
            log = log.display(),
            real = real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |args: &[&str]| {
        let mut cmd = a.command(args);
        cmd.env("PATH", &path).env("LANG", "de_DE.UTF-8").env("LANGUAGE", "de");
        crate::common::run_command(cmd, "")
    };
    let before = a.snapshot();
    insta::assert_snapshot!(a.transcript(&run(&["pull"])), @"
    exit 0
    --- stderr
    Already up to date.
    ");
    assert_eq!(a.snapshot(), before, "nothing was brought");
    insta::assert_snapshot!(a.transcript(&run(&["sync"])), @"
    exit 0
    --- stderr
    Synced with origin: nothing in; out 1 conversation (1 new), 0 events
    ");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains(" fetch ") && calls.contains(" ls-remote ") && calls.contains(" push "), "{calls}");
    for call in calls.lines() {
        assert!(call.starts_with("LC_ALL=C "), "every git convo reads runs in the C locale: {call}");
    }
}

/// On a terminal git's messages go to the user, not to convo: an empty hub is still told
/// by git's exit code, and a pull brings nothing with exit 0.
#[test]
fn an_empty_hub_brings_nothing_on_a_terminal_too() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    let before = a.snapshot();
    let mut script = a.sealed("script");
    script
        .args(["-qec", &format!("{} --color never pull", env!("CARGO_BIN_EXE_convo")), "/dev/null"])
        .env("CONVO_DIR", &a.store);
    let out = crate::common::run_command(script, "");
    let text = out.ok().replace('\r', "");
    assert!(text.ends_with("Already up to date.\n"), "{text}");
    assert_eq!(a.snapshot(), before, "nothing was brought");
}

/// Every file under `dir` with its bytes: equal before and after means nothing was written.
fn tree_bytes(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Issue 41: `push --dry-run` and `sync --dry-run` say which conversations and how many
/// events would go out, what the remote has that this store lacks (as last fetched), and
/// what the secret scan would refuse; the hub and the store stay byte for byte as they were.
#[test]
fn push_dry_run_says_what_would_go_out_and_changes_nothing_here_or_there() {
    let TwoPeople { a, b, hub, url, served: _served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.run(&["push"]).ok();
    a.run(&["fetch"]).ok();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["append", "--assistant", "answered"]).ok();
    let new = a.new_conversation("new here");
    a.run(&["append", "--user", "hello"]).ok();
    let (store, hub_files) = (a.snapshot(), tree_bytes(&hub));
    let ids = |text: String| text.replace(&new, "[NEW]");
    insta::assert_snapshot!(ids(a.transcript(&a.run(&["push", "--dry-run"]))), @r#"
    exit 0
    --- stdout
    Would push to origin (as last fetched: 4246ed9): 2 conversations (1 new, 1 updated), 3 events
      01KDVDQ4K00000000000000001 "shared": 2 events
      [NEW] "new here": 1 event, new
    origin has what this store lacks: 1 conversation (1 updated), 1 event; a push would be rejected until `convo pull` brings them in
    "#);
    insta::assert_snapshot!(ids(a.transcript(&a.run(&["sync", "-n"]))), @r#"
    exit 0
    --- stdout
    Would push to origin (as last fetched: 4246ed9): 2 conversations (1 new, 1 updated), 3 events
      01KDVDQ4K00000000000000001 "shared": 2 events
      [NEW] "new here": 1 event, new
    origin has what this store lacks: 1 conversation (1 updated), 1 event; sync would pull them in first
    "#);
    assert_eq!(a.snapshot(), store, "the store is unchanged");
    assert_eq!(tree_bytes(&hub), hub_files, "the hub is unchanged");
    let token = format!("ghp_{}", fake(ALNUM, 36, 7));
    a.run(&["append", "--user", &format!("my token {token}")]).ok();
    let (store, hub_files) = (a.snapshot(), tree_bytes(&hub));
    let refused = a.run(&["push", "--dry-run"]);
    assert!(!refused.stderr.contains(&token));
    insta::assert_snapshot!(ids(a.transcript(&refused)), @r#"
    exit 3
    --- stdout
    Would push to origin (as last fetched: 4246ed9): 2 conversations (1 new, 1 updated), 4 events
      01KDVDQ4K00000000000000001 "shared": 2 events
      [NEW] "new here": 2 events, new
    origin has what this store lacks: 1 conversation (1 updated), 1 event; a push would be rejected until `convo pull` brings them in
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: conversation [NEW] event 01KDVEB9400000000000000001 content: github-pat
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    "#);
    assert_eq!(a.snapshot(), store, "the store is unchanged");
    assert_eq!(tree_bytes(&hub), hub_files, "the hub is unchanged");
    assert!(!a.run(&["status"]).ok().contains("refused"), "a dry run records no refusal");
}

/// Issue 41: `status` says, per conversation, the commits not pushed and (from the last
/// fetch, or `--fetch`) the remote's commits not pulled; after a push, that all is up to
/// date; the sessions a hook follows, and one whose capture fails; a push the secret scan
/// refused in a hook's `sync`, where, and how to clear it, until a push goes through; the
/// next command run at a terminal says the refusal once.
#[test]
fn status_says_what_is_unpushed_unpulled_followed_failing_and_refused() {
    let TwoPeople { a, b, hub: _, url, served: _served } = two_people_on_disk();
    let url = url.as_str();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", url]).ok();
    let mut said = String::new();
    let mut status = |env: &TestEnv, args: &[&str]| {
        let out = env.run(&[&["status"], args].concat());
        said += &format!("$ convo status {}\n{}\n", args.join(" "), env.transcript(&out));
    };
    status(&a, &[]);
    a.run(&["push"]).ok();
    status(&a, &[]);
    clone_into(&b, url);
    b.run(&["switch", "shared"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.run(&["append", "--assistant", "answered b"]).ok();
    b.run(&["push"]).ok();
    a.new_conversation("only a");
    a.run(&["append", "--user", "a alone"]).ok();
    status(&a, &[]);
    status(&a, &["--fetch"]);

    // A session a hook follows, then a capture of it that fails.
    let session = "7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e";
    let file = a.root.join(format!("{session}.jsonl"));
    let line = |uuid: &str, kind: &str, content: &str| {
        serde_json::json!({"type": kind, "uuid": uuid, "sessionId": session, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": kind, "content": [{"type": "text", "text": content}]}})
        .to_string()
            + "\n"
    };
    let hook = serde_json::json!({"session_id": session, "transcript_path": file, "hook_event_name": "Stop"});
    std::fs::write(&file, line("u1", "user", "hello")).unwrap();
    a.run_stdin(&["hook", "claude-code"], &hook.to_string()).ok();
    // The agent wrote on, and no hook ran since: the session lags.
    std::fs::write(&file, line("u1", "user", "hello") + &line("a1", "assistant", "hi")).unwrap();
    status(&a, &[]);
    std::fs::write(&file, line("u1", "user", "hello") + "{not json\n").unwrap();
    a.run_stdin(&["hook", "claude-code"], &hook.to_string()).fails_with(3);

    // A hook's sync refused by the secret scan.
    let token = format!("ghp_{}", fake(ALNUM, 36, 7));
    a.run(&["switch", "only a"]).ok();
    a.run(&["append", "--user", &format!("my token {token}")]).ok();
    a.run(&["-q", "sync"]).fails_with(3);
    let event = a.run(&["show", "--format", "jsonl"]).ok().lines().last().unwrap().to_owned();
    let event: serde_json::Value = serde_json::from_str(&event).unwrap();
    // At a terminal, the next command says the refusal, once.
    let at_terminal = || {
        let line = format!("{} list", env!("CARGO_BIN_EXE_convo"));
        let mut cmd = a.sealed("script");
        cmd.args(["-qec", &line, "/dev/null"]).env("CONVO_DIR", &a.store).env("TERM", "xterm");
        crate::common::run_command(cmd, "").stdout.replace("\r\n", "\n")
    };
    let b_status = b.run(&["status"]);
    let told = at_terminal();
    assert!(told.contains("warning: a push to origin was refused at"), "{told}");
    assert!(!at_terminal().contains("refused"), "said twice");
    status(&a, &[]);
    let json: serde_json::Value = serde_json::from_str(a.run(&["status", "--format", "json"]).ok()).unwrap();
    assert_eq!(json["refused_push"]["secrets"], 1);
    assert_eq!(json["followed"][0]["session"], session);

    a.run(&["sync", "--allow-secrets"]).ok();
    status(&a, &[]);
    let text = said.replace(event["id"].as_str().unwrap(), "[EVENT]").replace(&a.root.display().to_string(), "[ROOT]");
    insta::assert_snapshot!(text, @r#"
    $ convo status 
    exit 0
    --- stdout
    On conversation "shared"
    Against origin (never fetched, or empty):
      "shared": 2 commits (1 event) not pushed
      (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)
    No failed captures.

    $ convo status 
    exit 0
    --- stdout
    On conversation "shared"
    Up to date with origin (as last fetched: 09dd0c6).
    No failed captures.

    $ convo status 
    exit 0
    --- stdout
    On conversation "only a"
    Against origin (as last fetched: 09dd0c6):
      "only a": 2 commits (1 event) not pushed
      (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)
    No failed captures.

    $ convo status --fetch
    exit 0
    --- stdout
    On conversation "only a"
    Against origin (as last fetched: 87f43d4):
      "shared": 2 commits (2 events) not pulled
      "only a": 2 commits (1 event) not pushed
      (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)
    No failed captures.

    $ convo status 
    exit 0
    --- stdout
    On conversation "hello"
    Against origin (as last fetched: 87f43d4):
      "shared": 2 commits (2 events) not pulled
      "only a": 2 commits (1 event) not pushed
      "hello": 1 commit (1 event) not pushed
      (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)
    Followed sessions:
      "hello": claude-code 7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl, captured up to 2026-01-01T00:00:00.000Z; lags: 194 bytes of its file not captured
    No failed captures.

    $ convo status 
    exit 0
    --- stdout
    On conversation "only a"
    Against origin (as last fetched: 87f43d4):
      "only a": 3 commits (2 events) not pushed
      "hello": 1 commit (1 event) not pushed
      (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)
    Followed sessions:
      "hello": claude-code 7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl, captured up to 2026-01-01T00:00:00.000Z; lags: 10 bytes of its file not captured; failing: 7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl: line 2: not valid JSON (key must be a string at line 1 column 2)
    1 failed capture (the newest first):
      2026-01-01T00:13:00.000Z  hook claude-code  [ROOT]/7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl
          7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl: line 2: not valid JSON (key must be a string at line 1 column 2)
    A push to origin was refused at 2026-01-01T00:16:00.000Z (sync): 1 secret in what it would publish:
      conversation 01KDVE24500000000000000001 event [EVENT] content: github-pat
      (`convo redact --secrets` replaces them in the unpushed commits, then push again; --allow-secrets pushes anyway)

    $ convo status 
    exit 0
    --- stdout
    On conversation "only a"
    Up to date with origin (as last fetched: 6fb05ef).
    Followed sessions:
      "hello": claude-code 7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl, captured up to 2026-01-01T00:00:00.000Z; lags: 10 bytes of its file not captured; failing: 7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl: line 2: not valid JSON (key must be a string at line 1 column 2)
    1 failed capture (the newest first):
      2026-01-01T00:13:00.000Z  hook claude-code  [ROOT]/7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl
          7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e.jsonl: line 2: not valid JSON (key must be a string at line 1 column 2)
    "#);
    insta::assert_snapshot!(b.transcript(&b_status), @r#"
    exit 0
    --- stdout
    On conversation "shared"
    Up to date with origin (as last fetched: 87f43d4).
    No failed captures.
    "#);
}

//! Sharing through real git servers on loopback: a bare repository by path and by file://,
//! `git daemon`, and smart HTTP through `git http-backend`. Nothing may be lost or doubled.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::TestEnv;
use common::githttp::{Daemon, Http};

/// A bare repository `name.git` under `dir`, on branch main, accepting pushes over HTTP.
fn bare(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.git"));
    let ok = std::process::Command::new("git")
        .args(["init", "--quiet", "--bare", "--initial-branch=main"])
        .arg(&path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::process::Command::new("git").args(["config", "http.receivepack", "true"]).current_dir(&path).status().unwrap();
    path
}

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
    assert_eq!(
        rejected.fails_with(6),
        "error: the remote `origin` has commits this store does not have\nhint: run `convo pull` to bring them in (nothing is lost), then push again\n"
    );
    let pulled = b.run(&["pull"]).ok().to_owned();
    assert!(pulled.starts_with("Merged "), "{pulled}");
    assert!(
        pulled.contains(&format!(
            "diverged: {shared} \"shared\": the remote's line keeps the id; your 1 event is in fork "
        )),
        "{pulled}"
    );
    b.run(&["push"]).ok();
    assert!(a.run(&["pull"]).ok().starts_with("Fast-forward to "));

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
    format!("conversations/{}/meta.json", fork["id"].as_str().unwrap())
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

    let key = "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz";
    env.run(&["append", "--user", &format!("my key is {key}")]).ok();
    env.run(&["append", "--tool-call", "read", "--args", "{}", "--call-id", "k1"]).ok();
    env.run(&[
        "append",
        "--tool-result",
        "k1",
        "--content",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
    ])
    .ok();
    let events: Vec<serde_json::Value> =
        env.run(&["show", "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (key_event, pem_event) = (events[1]["id"].as_str().unwrap(), events[3]["id"].as_str().unwrap());
    let out = env.run(&["push"]);
    assert_eq!(
        out.fails_with(3),
        format!(
            "error: refusing to push: 2 secrets found in the events to be pushed\n\
             hint: conversation {id} event {key_event}: OpenAI-style API key\n\
             hint: conversation {id} event {pem_event}: private key block\n\
             hint: nothing was pushed; --allow-secrets pushes anyway\n"
        )
    );
    assert!(!out.stderr.contains(key));
    assert_eq!(pushed(&env), before, "nothing reached the remote");
    env.run(&["push", "--allow-secrets"]).ok();
    assert_ne!(pushed(&env), before);
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
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.new_conversation("c");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    clone_into(&b, hub.to_str().unwrap());
    std::fs::create_dir_all(a.store.join("notes")).unwrap();
    std::fs::write(a.store.join("notes/x.txt"), "by hand\n").unwrap();
    a.git(&["add", "notes"]);
    a.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "notes"]);
    b.run(&["switch", "c"]).ok();
    b.run(&["append", "--user", "two"]).ok();
    b.run(&["push"]).ok();
    assert!(a.run(&["pull"]).ok().starts_with("Merged "));
    a.git(&["fsck", "--strict", "--no-progress"]);
    assert_eq!(std::fs::read_to_string(a.store.join("notes/x.txt")).unwrap(), "by hand\n");
    a.run(&["append", "--user", "three"]).ok();
    let fsck = a.run(&["fsck"]);
    assert_eq!(fsck.code, 1, "{fsck:?}");
    assert_eq!(
        fsck.stdout,
        "notes: not a file convo writes (only conversations/ and convo.toml belong at the top of a store)\n"
    );
    assert_eq!(a.git_status(), "");
}

/// The fork a pull makes of a conversation appended to on both sides holds the local events,
/// so its log goes back through the merge into the commits that wrote them.
#[test]
fn log_of_a_diverged_fork_reaches_back_through_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    clone_into(&b, hub.to_str().unwrap());
    b.run(&["switch", "shared"]).ok();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["push"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    b.run(&["pull"]).ok();

    let meta = fork_meta(&b);
    let fork = meta.split('/').nth(1).unwrap();
    let subjects: Vec<String> = b
        .run(&["log", fork, "--oneline", "--color", "never"])
        .ok()
        .lines()
        .map(|l| l.split_once(' ').unwrap().1.to_owned())
        .collect();
    // The merge, b's own append (now the fork's), then the history both sides share.
    assert_eq!(
        subjects,
        [
            "2026-01-05 merge: origin/main (1 conversation updated, 1 diverged into forks)",
            "2026-01-05 append: \"shared\" turn 1 (+1 event) [2 turns, 2 events, ~3 tokens (chars/4)]",
            "2026-01-01 append: \"shared\" turn 0 (+1 event) [1 turn, 1 event, ~2 tokens (chars/4)]",
            "2026-01-01 new: \"shared\" [0 turns, 0 events, ~0 tokens (chars/4)]",
        ]
    );
}

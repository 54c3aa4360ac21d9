//! Remotes built by an attacker with git plumbing (`hash-object --literally`, `commit-tree`,
//! `update-ref`): trees convo never writes, rewritten event lines, force-pushed histories
//! that reuse event ids. Pull and clone must refuse or divert, change nothing outside the
//! store, run nothing, and keep every local event in HEAD's tree.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{TestEnv, bare, conversation_dir, fan};

/// git with no user or system config, in `dir`, fed `stdin`; a fixed date, so the hostile
/// commits (and every hash after them) are the same on every run.
pub(crate) fn git_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "mallory")
        .env("GIT_AUTHOR_EMAIL", "m@evil")
        .env("GIT_COMMITTER_NAME", "mallory")
        .env("GIT_COMMITTER_EMAIL", "m@evil")
        .env("GIT_AUTHOR_DATE", "2026-01-02T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T00:00:00Z")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

pub(crate) fn git_str(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(git_in(dir, args, b"")).unwrap().trim().to_owned()
}

/// One tree entry: mode, raw name, object id (hex).
pub(crate) type Entry = (String, Vec<u8>, String);

pub(crate) fn read_tree(repo: &Path, tree: &str) -> Vec<Entry> {
    let out = git_in(repo, &["ls-tree", "-z", tree], b"");
    out.split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|record| {
            let tab = record.iter().position(|b| *b == b'\t').unwrap();
            let head = String::from_utf8(record[..tab].to_vec()).unwrap();
            let mut parts = head.split(' ');
            let mode = parts.next().unwrap().to_owned();
            let _kind = parts.next();
            let id = parts.next().unwrap().to_owned();
            (mode, record[tab + 1..].to_vec(), id)
        })
        .collect()
}

/// Write a tree object exactly as given (no sorting or name checks: `--literally`).
pub(crate) fn write_tree(repo: &Path, entries: &[Entry]) -> String {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.trim_start_matches('0').as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        for i in (0..id.len()).step_by(2) {
            bytes.push(u8::from_str_radix(&id[i..i + 2], 16).unwrap());
        }
    }
    let out = git_in(repo, &["hash-object", "-t", "tree", "-w", "--literally", "--stdin"], &bytes);
    String::from_utf8(out).unwrap().trim().to_owned()
}

pub(crate) fn blob(repo: &Path, bytes: &[u8]) -> String {
    String::from_utf8(git_in(repo, &["hash-object", "-w", "--stdin"], bytes)).unwrap().trim().to_owned()
}

/// `tree` with `entry` put (replacing any entry of that name) into the folder at `path`.
pub(crate) fn with_entry(repo: &Path, tree: &str, path: &[&str], entry: Entry) -> String {
    let mut entries = read_tree(repo, tree);
    match path.split_first() {
        None => {
            entries.retain(|(_, name, _)| *name != entry.1);
            entries.push(entry);
        }
        Some((dir, rest)) => {
            let sub = entries.iter().find(|(_, name, _)| name == dir.as_bytes()).expect("folder").2.clone();
            let new = with_entry(repo, &sub, rest, entry);
            for e in entries.iter_mut().filter(|(_, name, _)| name == dir.as_bytes()) {
                e.2 = new.clone();
            }
        }
    }
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    write_tree(repo, &entries)
}

pub(crate) fn commit(repo: &Path, tree: &str, parent: Option<&str>, message: &str) -> String {
    let mut args = vec!["commit-tree", tree, "-m", message];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    git_str(repo, &args)
}

/// A hub holding a store with one conversation of three events, and a clone of it.
pub(crate) struct World {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) hub: PathBuf,
    /// The store that pushed the hub's first commits.
    pub(crate) a: TestEnv,
    pub(crate) b: TestEnv,
    pub(crate) id: String,
    pub(crate) tip: String,
}

impl World {
    pub(crate) fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let hub = bare(&root, "hub");
        let a = TestEnv::new();
        let id = a.new_conversation("shared");
        a.run(&["append", "--user", "first"]).ok();
        a.run(&["append", "--assistant", "reply"]).ok();
        a.run(&["append", "--user", "second"]).ok();
        a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
        a.run(&["push"]).ok();
        let b = TestEnv::bare_at(100);
        b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
        b.run(&["switch", "shared"]).ok();
        let tip = git_str(&hub, &["rev-parse", "refs/heads/main"]);
        World { _dir: dir, root, hub, a, b, id, tip }
    }

    pub(crate) fn tip_tree(&self) -> String {
        git_str(&self.hub, &["rev-parse", &format!("{}^{{tree}}", self.tip)])
    }

    /// Point the hub's main at `commit`, as a push (or a force-push) would.
    pub(crate) fn publish(&self, commit: &str) {
        git_str(&self.hub, &["update-ref", "refs/heads/main", commit]);
    }
}

/// Every `(conversation, event line)` of a store's HEAD, read through `show --format jsonl`.
pub(crate) fn event_lines(env: &TestEnv) -> BTreeSet<String> {
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut lines = BTreeSet::new();
    for c in list.as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        lines.extend(env.run(&["show", id, "--format", "jsonl"]).ok().lines().map(str::to_owned));
    }
    lines
}

/// A hook that would create `marker` if git ever read this file as its config.
fn planted_config(marker: &Path) -> Vec<u8> {
    format!(
        "[core]\n\tfsmonitor = \"touch {m}; false\"\n\thooksPath = /tmp\n[alias]\n\tfetch = !touch {m}\n",
        m = marker.display()
    )
    .into_bytes()
}

#[test]
fn pull_and_clone_refuse_trees_convo_never_writes() {
    let w = World::new();
    let marker = w.root.join("PWNED");
    let outside = w.root.join("outside.txt");
    let config = blob(&w.hub, &planted_config(&marker));
    let text = blob(&w.hub, b"written outside the store\n");
    let git_dir = write_tree(&w.hub, &[("100644".into(), b"config".to_vec(), config.clone())]);
    let meta_dir = ["conversations", fan(&w.id), w.id.as_str()];
    let events = ["conversations", fan(&w.id), w.id.as_str(), "events"];
    let segment_dir = ["conversations", fan(&w.id), w.id.as_str(), "events", "0000"];
    let conversations_blob = blob(&w.hub, b"not a folder\n");
    // (what, where it goes, the entry, the path the error must name)
    let cases: Vec<(&str, &[&str], Entry, String)> = vec![
        ("`.git` at the top", &[], ("40000".into(), b".git".to_vec(), git_dir.clone()), ".git".into()),
        ("`.GIT` folded", &[], ("40000".into(), b".GIT".to_vec(), git_dir.clone()), ".GIT".into()),
        (
            "`.git` in a segment folder",
            &segment_dir,
            ("40000".into(), b".git".to_vec(), git_dir.clone()),
            format!("{}/events/0000/.git", conversation_dir(&w.id)),
        ),
        ("`..` entry", &[], ("100644".into(), b"..".to_vec(), text.clone()), "..".into()),
        (
            "`.` entry",
            &meta_dir,
            ("40000".into(), b".".to_vec(), git_dir.clone()),
            format!("{}/.", conversation_dir(&w.id)),
        ),
        ("backslash name", &[], ("100644".into(), b"..\\outside.txt".to_vec(), text.clone()), "..\\outside.txt".into()),
        ("absolute name", &[], ("100644".into(), b"/tmp/x".to_vec(), text.clone()), "/tmp/x".into()),
        (
            "symlinked meta.json",
            &meta_dir,
            ("120000".into(), b"meta.json".to_vec(), blob(&w.hub, outside.to_str().unwrap().as_bytes())),
            format!("{}/meta.json", conversation_dir(&w.id)),
        ),
        (
            "symlinked events folder",
            &meta_dir,
            ("120000".into(), b"events".to_vec(), blob(&w.hub, w.root.to_str().unwrap().as_bytes())),
            format!("{}/events", conversation_dir(&w.id)),
        ),
        (
            "gitlink",
            &events,
            ("160000".into(), b"0001".to_vec(), w.tip.clone()),
            format!("{}/events/0001", conversation_dir(&w.id)),
        ),
        (
            "executable segment",
            &segment_dir,
            ("100755".into(), b"000009.jsonl".to_vec(), text.clone()),
            format!("{}/events/0000/000009.jsonl", conversation_dir(&w.id)),
        ),
        (
            "conversations as a file",
            &[],
            ("100644".into(), b"conversations".to_vec(), conversations_blob),
            "conversations".into(),
        ),
        (
            "a file where a conversation folder goes",
            &["conversations"],
            ("100644".into(), b"01ARZ3NDEKTSV4RRFFQ69G5FAV".to_vec(), text.clone()),
            "conversations/01ARZ3NDEKTSV4RRFFQ69G5FAV".into(),
        ),
        (
            "non-UTF-8 name",
            &meta_dir,
            ("100644".into(), b"\xffmeta.json".to_vec(), text.clone()),
            format!("{}/\u{fffd}meta.json", conversation_dir(&w.id)),
        ),
        ("a foreign file", &[], ("100644".into(), b"run.sh".to_vec(), text.clone()), "run.sh".into()),
    ];
    let events_before = event_lines(&w.b);
    let before = w.b.snapshot();
    for (what, path, entry, named) in cases {
        let tree = with_entry(&w.hub, &w.tip_tree(), path, entry);
        let hostile = commit(&w.hub, &tree, Some(&w.tip), "innocent update");
        w.publish(&hostile);

        let out = w.b.run(&["pull"]);
        let stderr = out.fails_with(6);
        let first = stderr.lines().next().unwrap();
        assert!(first.starts_with(&format!("error: refusing commit {}: {named}: ", &hostile[..7])), "{what}: {stderr}");
        assert_eq!(stderr.lines().count(), 2, "{what}: one line and a hint: {stderr}");
        assert!(stderr.lines().nth(1).unwrap().starts_with("hint: "), "{what}: {stderr}");
        let after = w.b.snapshot();
        let changed: Vec<_> = after.keys().chain(before.keys()).filter(|k| before.get(*k) != after.get(*k)).collect();
        assert!(changed.is_empty(), "{what}: a refused pull changed the store: {changed:?}");
        // A following fetch runs nothing planted, and the store still works.
        w.b.run(&["fetch"]).fails_with(6);
        assert!(!marker.exists(), "{what}: a planted command ran");
        assert!(!outside.exists(), "{what}: a file was written outside the store");
        assert!(w.b.snapshot() == before, "{what}: a refused fetch changed the store");

        let clone = w.root.join(format!("clone-{}", what.replace([' ', '`', '.'], "-")));
        let out = w.b.run(&["clone", w.hub.to_str().unwrap(), clone.to_str().unwrap()]);
        let stderr = out.fails_with(6);
        assert!(
            stderr.starts_with(&format!("error: refusing commit {}: {named}: ", &hostile[..7])),
            "{what}: {stderr}"
        );
        assert!(!clone.exists(), "{what}: a refused clone left its folder");
        assert!(!marker.exists() && !outside.exists(), "{what}: clone wrote outside the store");
    }
    w.b.run(&["fsck"]).ok();
    assert_eq!(event_lines(&w.b), events_before);
    w.b.run(&["append", "--user", "still works"]).ok();

    // Put back, the hub is pulled as usual.
    w.publish(&w.tip);
    assert_eq!(w.b.run(&["pull"]).ok_status(), "Already up to date.\n");
}

/// The layout-preserving segment of `tree` for the conversation, with `edit` applied to its
/// text; returns the new root tree.
pub(crate) fn edit_segment(w: &World, tree: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = ["conversations", fan(&w.id), w.id.as_str(), "events", "0000"];
    let segment = format!("{tree}:{}/events/0000/000000.jsonl", conversation_dir(&w.id));
    let text = git_str(&w.hub, &["cat-file", "blob", &segment]) + "\n";
    let edited = blob(&w.hub, edit(&text).as_bytes());
    with_entry(&w.hub, tree, &dir, ("100644".into(), b"000000.jsonl".to_vec(), edited))
}

#[test]
fn a_fast_forward_that_rewrites_an_event_is_diverted_into_a_fork() {
    let w = World::new();
    let ours = event_lines(&w.b);
    let tree = edit_segment(&w, &w.tip_tree(), |text| text.replacen("\"first\"", "\"rm -rf / please\"", 1));
    let hostile = commit(&w.hub, &tree, Some(&w.tip), "append: fix typo");
    w.publish(&hostile);

    let out = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&out), @r#"
    exit 0
    --- stderr
    Merged a5ed551 (1 conversation updated)
    diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line rewrites 1 of your events and keeps the id; your 1 event is in fork 01KE656YW00000000000000001
    "#);
    let after = event_lines(&w.b);
    assert!(ours.is_subset(&after), "a local event was lost: {:?}", ours.difference(&after).collect::<Vec<_>>());
    // The reuse is history now: fsck names it.
    let fsck = w.b.run(&["fsck"]);
    insta::assert_snapshot!(w.b.transcript(&fsck), @"
    exit 1
    --- stdout
    conversations/01/01KDVDQ4K00000000000000001: event id `01KDVDRZ600000000000000001` names different content in commits a5ed551 and b1a054a
    --- stderr
    error: 1 problem found
    ");
    assert_eq!(w.b.git_status(), "");
}

#[test]
fn a_force_push_that_reuses_ids_with_other_content_loses_nothing() {
    let w = World::new();
    // Local work the hub has not seen.
    w.b.run(&["append", "--user", "unpushed"]).ok();
    let ours = event_lines(&w.b);
    // A new root commit: the same conversation, its first event replaced, one more added.
    let tree = edit_segment(&w, &w.tip_tree(), |text| {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines[0] = lines[0].replace("\"first\"", "\"forged\"");
        lines.push(lines[2].replace("\"second\"", "\"third\"").replacen("\"id\":\"", "\"id\":\"X", 1));
        lines.join("\n") + "\n"
    });
    let forced = commit(&w.hub, &tree, None, "history, rewritten");
    w.publish(&forced);

    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @r#"
    exit 0
    --- stderr
    Merged 237a130 (1 conversation updated)
    diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line rewrites 1 of your events and keeps the id; your 2 events are in fork 01KE658SF00000000000000001
    "#);
    let after = event_lines(&w.b);
    assert!(ours.is_subset(&after), "a local event was lost: {:?}", ours.difference(&after).collect::<Vec<_>>());
    // Every event line in the store: ours, and the remote's (the forged one) too.
    insta::assert_snapshot!(after.into_iter().collect::<Vec<_>>().join("\n"), @r#"
    {"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"first"}
    {"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"forged"}
    {"id":"01KDVDTSS00000000000000001","ts":"2026-01-01T00:03:00.000Z","type":"assistant","content":"reply"}
    {"id":"01KDVDWMC00000000000000001","ts":"2026-01-01T00:04:00.000Z","type":"user","content":"second"}
    {"id":"01KE6539P00000000000000001","ts":"2026-01-05T04:02:00.000Z","type":"user","content":"unpushed"}
    {"id":"X01KDVDWMC00000000000000001","ts":"2026-01-01T00:04:00.000Z","type":"user","content":"third"}
    "#);
    // And the result can be pushed back without force.
    w.b.run(&["push"]).ok();
}

#[test]
fn a_remote_that_drops_a_conversation_we_appended_to_does_not_drop_ours() {
    let w = World::new();
    // A removal of a conversation we left alone is taken (restorably: see
    // `fixing_mistakes`); one we appended to since is not, whoever removed it.
    w.b.run(&["append", "--user", "unpushed"]).ok();
    let ours = event_lines(&w.b);
    let tree = write_tree(&w.hub, &[]);
    let emptied = commit(&w.hub, &tree, Some(&w.tip), "clean up");
    w.publish(&emptied);
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Merged c1faf68 (0 conversations updated)
    kept: 01KDVDQ4K00000000000000001: the remote's line removes this conversation; yours stays
    ");
    assert_eq!(event_lines(&w.b), ours);
    w.b.run(&["fsck"]).ok();
}

#[test]
fn a_planted_journal_writes_nothing_outside_convo_paths() {
    // Where convo keeps its journal, and where an older convo kept it.
    for name in ["journal", "txn"] {
        let w = World::new();
        let journal = w.b.store.join(".git/convo").join(name);
        std::fs::write(&journal, r#"{"paths":[".git/config","../outside.txt","conversations/../../x"]}"#).unwrap();
        let config = std::fs::read(w.b.store.join(".git/config")).unwrap();
        w.b.run(&["append", "--user", "after the journal"]).ok();
        assert_eq!(std::fs::read(w.b.store.join(".git/config")).unwrap(), config, "{name}");
        assert!(!w.b.root.join("outside.txt").exists(), "{name}");
        let left = std::fs::read(&journal).unwrap_or_default();
        assert!(left.iter().all(u8::is_ascii_whitespace), "{name}: {}", String::from_utf8_lossy(&left));
        w.b.run(&["fsck"]).ok();
    }
}

#[test]
fn a_symlink_in_the_working_tree_is_refused_and_reported() {
    let w = World::new();
    let elsewhere = w.root.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let events = w.b.store.join(format!("{}/events", conversation_dir(&w.id)));
    std::fs::rename(&events, elsewhere.join("events")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("events"), &events).unwrap();
    let head = w.b.git(&["rev-parse", "HEAD"]);
    let outside_before = std::fs::read(elsewhere.join("events/0000/000000.jsonl")).unwrap();

    let out = w.b.run(&["append", "--user", "through the link"]);
    assert_eq!(
        out.fails_with(5),
        format!(
            "error: {}/events: is a symlink; convo does not follow symlinks inside a store\n\
             hint: replace the symlink with the real folder or file; `convo fsck` lists every problem\n",
            conversation_dir(&w.id)
        )
    );
    assert_eq!(w.b.git(&["rev-parse", "HEAD"]), head, "nothing was committed");
    assert_eq!(std::fs::read(elsewhere.join("events/0000/000000.jsonl")).unwrap(), outside_before);
    let fsck = w.b.run(&["fsck"]);
    assert_eq!(fsck.code, 1);
    assert_eq!(
        fsck.stdout,
        format!("{}/events: symlink in the working tree; convo never follows it\n", conversation_dir(&w.id))
    );
}

/// Every file and folder of a store made by `init` and written by convo, and of a clone, is
/// user-only, whatever the umask convo was started with.
#[test]
fn stores_and_clones_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    w.b.run(&["append", "--user", "in the clone"]).ok();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&w.b.store), 0o700);
    let mut stack = vec![w.b.store.clone(), w.a.store.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let m = mode(&path);
            assert_eq!(m & 0o077, 0, "{} is {m:o}", path.display());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
}

/// Events a pull diverted into a fork are new to the remote: the secret scan sees them.
#[test]
fn a_diverted_event_is_scanned_before_it_is_pushed() {
    let w = World::new();
    let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    w.b.run(&["append", "--user", &format!("my token is {token}")]).ok();
    let tree = edit_segment(&w, &w.tip_tree(), |text| text.replacen("\"first\"", "\"forged\"", 1));
    w.publish(&commit(&w.hub, &tree, None, "history, rewritten"));
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @r#"
    exit 0
    --- stderr
    Merged a44dcda (1 conversation updated)
    diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line rewrites 1 of your events and keeps the id; your 2 events are in fork 01KE6554900000000000000001
    "#);
    let hub_before = git_str(&w.hub, &["rev-parse", "refs/heads/main"]);
    let out = w.b.run(&["push"]);
    // A substring check by nature, beside the snapshot: the secret appears nowhere.
    assert!(!out.stderr.contains(token), "a finding never shows the secret: {}", out.stderr);
    insta::assert_snapshot!(w.b.transcript(&out), @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: conversation 01KE6554900000000000000001 event 01KE6539P00000000000000001 content: github-pat
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    assert_eq!(git_str(&w.hub, &["rev-parse", "refs/heads/main"]), hub_before, "nothing was pushed");
}

/// `meta.json` is content anyone who can push wrote: a pulled conversation that names one of
/// ours as its parent (`subagent_of`) must not make `convo rm` of ours remove it too (and,
/// once pushed, remove it for everyone). Only links an import here captured are followed;
/// the claimed one is kept and said.
#[test]
fn a_pulled_subagent_claim_does_not_choose_what_rm_removes() {
    let w = World::new();
    let teammate = w.a.new_conversation("the teammate's notes");
    w.a.run(&["append", "--user", "keep me"]).ok();
    w.a.run(&["push"]).ok();
    let tip = git_str(&w.hub, &["rev-parse", "refs/heads/main"]);
    let tree = git_str(&w.hub, &["rev-parse", &format!("{tip}^{{tree}}")]);
    let meta = format!(
        "{{\n  \"title\": \"the teammate's notes\",\n  \"created\": \"2026-01-02T00:00:00Z\",\n  \"subagent_of\": \"{}\"\n}}\n",
        w.id
    );
    let claim = ("100644".to_owned(), b"meta.json".to_vec(), blob(&w.hub, meta.as_bytes()));
    let tree = with_entry(&w.hub, &tree, &["conversations", fan(&teammate), teammate.as_str()], claim);
    w.publish(&commit(&w.hub, &tree, Some(&tip), "innocent update"));
    w.b.run(&["pull"]).ok();
    let listed: serde_json::Value = serde_json::from_str(w.b.run(&["list", "--format", "json"]).ok()).unwrap();
    let claims = listed.as_array().unwrap().iter().find(|c| c["id"] == teammate.as_str()).unwrap();
    assert_eq!(claims["subagent_of"], w.id.as_str(), "the pull took the claim");

    let rm = w.b.run(&["rm", &w.id]);
    let kept = format!(
        "Kept 1 conversation naming a removed one as parent but not imported here: {teammate} (`convo rm ID` removes one)"
    );
    assert!(rm.ok_status().contains(&kept), "{}", rm.stderr);
    assert!(!rm.stderr.contains("Also removed"), "{}", rm.stderr);
    let listed: serde_json::Value = serde_json::from_str(w.b.run(&["list", "--format", "json"]).ok()).unwrap();
    let ids: Vec<&str> = listed.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [teammate.as_str()]);
    assert!(w.b.run(&["show", &teammate, "--format", "jsonl"]).ok().contains("keep me"));
    w.b.run(&["fsck"]).ok();
}

/// The hostile edits of a session's record [`a_pulled_session_record_does_not_choose_where_the_session_goes_on`]
/// tries: its name, and the edit of the record given the session's conversation's events
/// and a fork of it that holds no record of the session.
type RecordEdit = (&'static str, fn(&mut serde_json::Value, &[String], &str));

/// A session's record (`source` in its conversation's `meta.json`) says where the session
/// goes on: `tip`, `went_on_in`, and a fork's `forked_at`. Each arrives with a pull as data:
/// a `went_on_in` naming a conversation that is not a fork of this one holding the session,
/// or no conversation at all, is not followed (the session would import its whole history
/// again, or go on elsewhere), and a `tip` moved back sends the next turn to a fork, never
/// over or between the line's events. In every case the session's next turn lands once and
/// every event before it is kept as it was.
#[test]
fn a_pulled_session_record_does_not_choose_where_the_session_goes_on() {
    use crate::follow::claude_line;
    use serde_json::{Value, json};
    let edits: [RecordEdit; 6] = [
        ("went_on_in another conversation", |r, _, _| r["went_on_in"] = json!("01KDVDQ4K00000000000000001")),
        ("went_on_in no conversation", |r, _, _| r["went_on_in"] = json!("01ZZZZZZZZZZZZZZZZZZZZZZZZ")),
        ("went_on_in a path", |r, _, _| r["went_on_in"] = json!("../../../../tmp/x")),
        ("went_on_in not a string", |r, _, _| r["went_on_in"] = json!({"id": 42})),
        ("went_on_in a fork without the session", |r, _, fork| r["went_on_in"] = json!(fork)),
        ("a tip moved back", |r, events, _| r["tip"] = json!(events[0])),
    ];
    for (name, edit) in edits {
        let w = World::new();
        let dir = tempfile::tempdir().unwrap();
        let session = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
        let file = dir.path().join(format!("{session}.jsonl"));
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        std::fs::write(
            &file,
            claude_line(session, "u1", None, "user", json!("plan the release"))
                + &claude_line(session, "a1", Some("u1"), "assistant", text("first, the changelog")),
        )
        .unwrap();
        let follow = || w.b.run(&["import", "--follow", file.to_str().unwrap()]);
        follow().ok();
        let ids = |env: &TestEnv| -> Vec<String> {
            let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
            list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect()
        };
        let conversation = ids(&w.b).into_iter().find(|id| *id != w.id).unwrap();
        let event_ids = |id: &str| -> Vec<String> {
            let shown = w.b.run(&["show", id, "--format", "jsonl"]).ok().to_owned();
            shown
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let before = event_ids(&conversation);
        // A fork of the session's conversation that holds no record of the session.
        w.b.run(&["fork", &conversation]).ok();
        let fork = ids(&w.b).into_iter().find(|id| *id != w.id && *id != conversation).unwrap();
        w.b.run(&["push"]).ok();

        // The hub's meta.json of the conversation, edited with plumbing.
        let tip = git_str(&w.hub, &["rev-parse", "refs/heads/main"]);
        let tree = git_str(&w.hub, &["rev-parse", &format!("{tip}^{{tree}}")]);
        let meta_path = format!("{tip}:{}/meta.json", conversation_dir(&conversation));
        let mut meta: Value = serde_json::from_str(&git_str(&w.hub, &["cat-file", "blob", &meta_path])).unwrap();
        assert_eq!(meta["source"]["session"], session, "{meta}");
        edit(&mut meta["source"], &before, &fork);
        meta["forked_at"] = json!("../../../../tmp/y");
        let planted = ("100644".to_owned(), b"meta.json".to_vec(), blob(&w.hub, meta.to_string().as_bytes()));
        let tree = with_entry(&w.hub, &tree, &["conversations", fan(&conversation), conversation.as_str()], planted);
        w.publish(&commit(&w.hub, &tree, Some(&tip), "innocent update"));
        w.b.run(&["pull"]).ok();
        let conversations = ids(&w.b);

        // The session goes on.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(
                (claude_line(session, "u2", Some("a1"), "user", json!("now tag it"))
                    + &claude_line(session, "a2", Some("u2"), "assistant", text("tagged v2")))
                    .as_bytes(),
            )
            .unwrap();
        let captured = follow();
        captured.ok();
        let now = ids(&w.b);
        let lines = event_lines(&w.b);
        let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
        assert_eq!(count("now tag it"), 1, "{name}: the next turn once\n{lines:#?}");
        let after = event_ids(&conversation);
        if name == "a tip moved back" {
            // The turn went on in a fork from the planted tip; the line is as it was.
            assert_eq!(after, before, "{name}");
            assert_eq!(now.len(), conversations.len() + 1, "{name}: {}", captured.stderr);
            assert!(
                captured.stderr.contains("its line had gone on past the session's last turn"),
                "{name}: {}",
                captured.stderr
            );
        } else {
            // Followed where it was: the line goes on, nothing imported a second time.
            assert_eq!(now, conversations, "{name}: {}", captured.stderr);
            assert_eq!(after[..before.len()], before[..], "{name}");
            assert_eq!(after.len(), before.len() + 2, "{name}: {after:?}");
        }
        assert!(!Path::new("/tmp/x").exists() && !Path::new("/tmp/y").exists());
        w.b.run(&["fsck"]).ok();
    }
}

//! The "import cycles" step of `cargo xtask test`: no module of a crate may depend on a module
//! that depends on it back (docs/architecture.md §15).
//!
//! Each crate's module tree is read from its root (`lib.rs`, `main.rs`) by its `mod name;`
//! lines. A module depends on another when it names it in a `use` or in a path
//! (`crate::hub::Hub`, `super::store`, `self::x`; a `use` of a child by its bare name):
//! the path is resolved to the longest prefix that is a module file. A module and its own
//! descendants are one unit: a parent's `mod` lines and re-exports of its children, and a
//! child's use of what its parent holds, are no cycle. Inline modules (`mod tests { … }`)
//! count as part of the file they are in; comments and string literals are skipped.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// The source folders checked, each holding one or more crate roots.
const SOURCE_DIRS: &[&str] = &["src", "bridge/src", "web/src"];
/// The files a crate starts from, in a source folder.
const ROOTS: &[&str] = &["lib.rs", "main.rs"];

/// Fails naming every cycle found in [`SOURCE_DIRS`].
pub fn check(root: &Path) -> Result<(), String> {
    let mut found = Vec::new();
    for dir in SOURCE_DIRS {
        let files = read_rs_files(&root.join(dir))?;
        for cycle in find_cycles(&files) {
            found.push(format!("{dir}: {cycle}"));
        }
    }
    if found.is_empty() {
        eprintln!("import cycles: none in {}", SOURCE_DIRS.join(", "));
        return Ok(());
    }
    Err(format!(
        "{} import cycle(s); each module on one must stop naming the next (move what both \
         need into a module of its own, or pass it in):\n    {}",
        found.len(),
        found.join("\n    ")
    ))
}

/// Every `.rs` file below `dir`, by its path relative to `dir` (`/`-separated).
fn read_rs_files(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let entries =
            std::fs::read_dir(&at).map_err(|e| format!("cannot list {}: {e}", at.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                files.insert(rel, text);
            }
        }
    }
    Ok(files)
}

/// The cycles among the modules of the crates rooted in `files` (path → source), one line
/// per tangle (`chat -> hub -> chat`), in a stable order.
pub fn find_cycles(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for root in ROOTS {
        if files.contains_key(*root) {
            let graph = Crate::read(files, root).graph();
            out.extend(cycles(&graph));
        }
    }
    out
}

/// A module's path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One crate: each module (by path) with its source.
struct Crate<'a> {
    modules: BTreeMap<ModPath, &'a str>,
}

impl<'a> Crate<'a> {
    /// The modules reachable from `root` by `mod name;` lines.
    fn read(files: &'a BTreeMap<String, String>, root: &str) -> Crate<'a> {
        let mut modules = BTreeMap::new();
        let mut pending: Vec<(ModPath, String)> = vec![(Vec::new(), root.to_string())];
        while let Some((path, file)) = pending.pop() {
            let Some(text) = files.get(&file) else {
                continue;
            };
            // Children of `a.rs` and of `a/mod.rs` live in `a/`; of a root, beside it.
            let dir = match file.rsplit_once('/') {
                Some((dir, "mod.rs")) => format!("{dir}/"),
                _ if path.is_empty() => String::new(),
                _ => format!("{}/", file.trim_end_matches(".rs")),
            };
            for child in declared_children(&lex(text)) {
                let candidates = [format!("{dir}{child}.rs"), format!("{dir}{child}/mod.rs")];
                if let Some(found) = candidates.into_iter().find(|c| files.contains_key(c)) {
                    let mut child_path = path.clone();
                    child_path.push(child);
                    pending.push((child_path, found));
                }
            }
            modules.insert(path, text.as_str());
        }
        Crate { modules }
    }

    /// Each module with the modules it depends on (itself, its ancestors and descendants left
    /// out).
    fn graph(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut graph = BTreeMap::new();
        for (module, text) in &self.modules {
            let mut deps = BTreeSet::new();
            for (scope, path) in named_paths(&lex(text)) {
                let mut at = module.clone();
                at.extend(scope);
                if let Some(target) = self.resolve(&at, &path) {
                    let related = target.starts_with(module) || module.starts_with(&target);
                    if !related {
                        deps.insert(target);
                    }
                }
            }
            graph.insert(module.clone(), deps);
        }
        graph
    }

    /// The module file a path written in module `at` names: the longest prefix of the path
    /// that is a module. `None` for paths into other crates.
    fn resolve(&self, at: &ModPath, path: &[String]) -> Option<ModPath> {
        let (first, rest) = path.split_first()?;
        let mut full: ModPath = match first.as_str() {
            "crate" => Vec::new(),
            "self" => at.clone(),
            "super" => at[..at.len().checked_sub(1)?].to_vec(),
            // A bare name: a child of the current module (a `use` relative to it), else
            // another crate or a local name.
            name => {
                let mut child = at.clone();
                child.push(name.to_string());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                child
            }
        };
        for segment in rest {
            match segment.as_str() {
                "super" => {
                    full.pop()?;
                }
                "self" => {}
                name => full.push(name.to_string()),
            }
        }
        (0..=full.len())
            .rev()
            .map(|n| full[..n].to_vec())
            .find(|prefix| self.modules.contains_key(prefix))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// Rust source as identifiers, `::` and single punctuation, without comments, strings,
/// character literals, lifetimes and numbers.
fn lex(text: &str) -> Vec<Tok> {
    let s: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && s.get(i + 1) == Some(&'/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && s.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&s, i, 0);
        } else if c == '\'' {
            if s.get(i + 1) == Some(&'\\') {
                // An escaped character literal: to its closing quote.
                i += 2;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if s.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or label: the quote, then its name as an identifier we drop.
                i += 1;
                while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            let next = s.get(i).copied();
            let raw_capable = matches!(word.as_str(), "r" | "br" | "cr");
            let string_prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
            if string_prefix && next == Some('"') {
                i = skip_string(&s, i, 0);
            } else if raw_capable && next == Some('#') {
                let hashes = s[i..].iter().take_while(|&&h| h == '#').count();
                if s.get(i + hashes) == Some(&'"') {
                    i = skip_string(&s, i + hashes, hashes);
                } else if word == "r" {
                    // A raw identifier, `r#type`.
                    i += 1;
                    let start = i;
                    while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                        i += 1;
                    }
                    toks.push(Tok::Ident(s[start..i].iter().collect()));
                } else {
                    toks.push(Tok::Ident(word));
                }
            } else if word == "b" && next == Some('\'') {
                i += 1;
                if s.get(i + 1) == Some(&'\\') {
                    i += 2;
                }
                while i + 1 < s.len() && s[i + 1] != '\'' {
                    i += 1;
                }
                i += 2;
            } else {
                toks.push(Tok::Ident(word));
            }
        } else if c == ':' && s.get(i + 1) == Some(&':') {
            toks.push(Tok::PathSep);
            i += 2;
        } else {
            toks.push(Tok::Punct(c));
            i += 1;
        }
    }
    toks
}

/// Past the string opening at `s[at] == '"'`; a raw string (`hashes` > 0, or any raw string
/// when called after `r`) ends at `"` followed by that many `#`.
fn skip_string(s: &[char], at: usize, hashes: usize) -> usize {
    let raw = at > 0 && (s[at - 1] == '#' || s[at - 1] == 'r');
    let mut i = at + 1;
    while i < s.len() {
        if s[i] == '\\' && !raw {
            i += 2;
        } else if s[i] == '"'
            && s[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        } else {
            i += 1;
        }
    }
    i
}

/// The `mod name;` lines of a file (outside inline modules).
fn declared_children(toks: &[Tok]) -> Vec<String> {
    let mut children = Vec::new();
    let mut depth = 0usize;
    for (i, tok) in toks.iter().enumerate() {
        match tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth = depth.saturating_sub(1),
            Tok::Ident(m) if m == "mod" && depth == 0 => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct(';'))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    children.push(name.clone());
                }
            }
            _ => {}
        }
    }
    children
}

/// Every path a file names, with the inline module (`tests`) it is written in: the paths of
/// its `use` trees, expanded, and the paths starting with `crate`, `super` or `self` elsewhere.
fn named_paths(toks: &[Tok]) -> Vec<(ModPath, Vec<String>)> {
    let mut out = Vec::new();
    // Inline modules open here, with the brace depth inside each.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let scope = |inline: &[(String, usize)]| -> ModPath {
        inline.iter().map(|(name, _)| name.clone()).collect()
    };
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(m) if m == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                    depth += 1;
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(u) if u == "use" => {
                let end = toks[i..]
                    .iter()
                    .position(|t| *t == Tok::Punct(';'))
                    .map_or(toks.len(), |p| i + p);
                let here = scope(&inline);
                let mut paths = Vec::new();
                expand_use(&toks[i + 1..end], &[], &mut paths);
                out.extend(paths.into_iter().map(|p| (here.clone(), p)));
                i = end + 1;
            }
            Tok::Ident(w)
                if matches!(w.as_str(), "crate" | "super" | "self")
                    && toks.get(i + 1) == Some(&Tok::PathSep) =>
            {
                let mut path = vec![w.clone()];
                i += 1;
                while toks.get(i) == Some(&Tok::PathSep) {
                    match toks.get(i + 1) {
                        Some(Tok::Ident(seg)) => {
                            path.push(seg.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                out.push((scope(&inline), path));
            }
            _ => i += 1,
        }
    }
    out
}

/// The paths of one `use` tree (`a::{b, c::d as e, self}`), each below `prefix`.
fn expand_use(toks: &[Tok], prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Ident(a) if a == "as" => i += 2,
            Tok::Ident(seg) if seg == "self" && path.len() > prefix.len() => i += 1,
            Tok::Ident(seg) => {
                path.push(seg.clone());
                i += 1;
            }
            Tok::PathSep | Tok::Punct('*') => i += 1,
            Tok::Punct('{') => {
                // The group's extent, then each of its comma-separated trees.
                let mut depth = 0;
                let mut end = i;
                for (j, t) in toks.iter().enumerate().skip(i) {
                    match t {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                end = j;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let inner = &toks[i + 1..end.max(i + 1)];
                let mut start = 0;
                let mut d = 0;
                for (j, t) in inner.iter().enumerate() {
                    match t {
                        Tok::Punct('{') => d += 1,
                        Tok::Punct('}') => d -= 1,
                        Tok::Punct(',') if d == 0 => {
                            expand_use(&inner[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                expand_use(&inner[start..], &path, out);
                path = prefix.to_vec();
                i = end + 1;
            }
            Tok::Punct(',') => {
                if path.len() > prefix.len() {
                    out.push(std::mem::replace(&mut path, prefix.to_vec()));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    if !path.is_empty() && (path.len() > prefix.len() || out.is_empty()) {
        out.push(path);
    }
}

/// One line per strongly connected group of more than one module: the shortest cycle through
/// its first module, then the group's other modules if the cycle does not pass them all.
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<String> {
    let mut lines = Vec::new();
    for group in strongly_connected(graph) {
        if group.len() < 2 {
            continue;
        }
        let start = &group[0];
        let cycle = shortest_cycle(graph, start, &group);
        let mut line = cycle.iter().map(name).collect::<Vec<_>>().join(" -> ");
        let others: Vec<String> = group
            .iter()
            .filter(|m| !cycle.contains(m))
            .map(name)
            .collect();
        if !others.is_empty() {
            line.push_str(&format!(" (tangled with {})", others.join(", ")));
        }
        lines.push(line);
    }
    lines
}

fn name(module: &ModPath) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// Tarjan's strongly connected components, each sorted, in the order of their first module.
fn strongly_connected(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'g> {
        graph: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on_stack: BTreeSet<&'g ModPath>,
        groups: Vec<Vec<ModPath>>,
    }
    fn visit<'g>(st: &mut State<'g>, v: &'g ModPath) {
        let n = st.index.len();
        st.index.insert(v, n);
        st.low.insert(v, n);
        st.stack.push(v);
        st.on_stack.insert(v);
        for w in st.graph.get(v).into_iter().flatten() {
            if !st.graph.contains_key(w) {
                continue;
            }
            if !st.index.contains_key(w) {
                visit(st, w);
                let low = st.low[v].min(st.low[w]);
                st.low.insert(v, low);
            } else if st.on_stack.contains(w) {
                let low = st.low[v].min(st.index[w]);
                st.low.insert(v, low);
            }
        }
        if st.low[v] == st.index[v] {
            let mut group = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on_stack.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            group.sort();
            st.groups.push(group);
        }
    }
    let mut st = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in graph.keys() {
        if !st.index.contains_key(v) {
            visit(&mut st, v);
        }
    }
    let mut groups = st.groups;
    groups.sort();
    groups
}

/// The shortest path from `start` back to itself inside `group`, `start` at both ends.
fn shortest_cycle(
    graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    start: &ModPath,
    group: &[ModPath],
) -> Vec<ModPath> {
    let mut came_from: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(v).into_iter().flatten() {
            if !group.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.clone(), v.clone()];
                let mut at = v;
                while let Some(prev) = came_from.get(at) {
                    path.push((*prev).clone());
                    at = prev;
                }
                path.reverse();
                return path;
            }
            if w != start && !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start.clone()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect()
    }

    #[test]
    fn a_cycle_is_found_and_named() {
        let files = tree(&[
            ("lib.rs", "mod chat;\nmod hub;\nmod clock;"),
            ("chat.rs", "use crate::hub::Hub;\nuse crate::clock;"),
            ("hub.rs", "pub struct Hub;\nfn f() { crate::chat::run(); }"),
            ("clock.rs", ""),
        ]);
        assert_eq!(find_cycles(&files), ["chat -> hub -> chat"]);
    }

    #[test]
    fn a_tree_without_a_cycle_passes() {
        let files = tree(&[
            ("lib.rs", "pub mod chat;\npub mod hub;\npub use hub::Hub;"),
            ("chat.rs", "use crate::hub::{Hub, Kind as K};"),
            ("hub.rs", "pub struct Hub; pub enum Kind {}"),
        ]);
        assert_eq!(find_cycles(&files), Vec::<String>::new());
    }

    #[test]
    fn super_paths_resolve_to_the_module_files() {
        // store/facts.rs reaches hub through `super::super`, hub names store::facts: a cycle
        // between store::facts and hub, and none between store and its own child.
        let files = tree(&[
            ("lib.rs", "mod hub;\nmod store;"),
            ("hub.rs", "use crate::store::facts::Fact;"),
            ("store/mod.rs", "pub mod facts;\npub use facts::Fact;"),
            (
                "store/facts.rs",
                "use super::super::hub;\nuse super::Store;\npub struct Fact;",
            ),
        ]);
        assert_eq!(find_cycles(&files), ["hub -> store::facts -> hub"]);
    }

    #[test]
    fn a_longer_cycle_is_named_in_order_and_through_use_groups() {
        let files = tree(&[
            ("main.rs", "mod a;\nmod b;\nmod c;"),
            ("a.rs", "use crate::{b::B, c};"),
            ("b.rs", "use crate::c::{self, inner::C};"),
            ("c/mod.rs", "mod inner;"),
            ("c/inner.rs", "use crate::a;"),
        ]);
        assert_eq!(find_cycles(&files), ["a -> b -> c::inner -> a"]);
    }

    #[test]
    fn comments_strings_and_test_modules_name_nothing() {
        let files = tree(&[
            ("lib.rs", "mod a;\nmod b;"),
            ("a.rs", "use crate::b;"),
            (
                "b.rs",
                "// crate::a::x\n/// [`x`](crate::a::x)\n/* crate::a */\n\
                 const S: &str = \"crate::a::x\";\nconst R: &str = r#\"crate::a\"#;\n\
                 fn f<'a>(x: &'a str) -> char { 'a' }\n\
                 #[cfg(test)]\nmod tests {\n    use super::*;\n}",
            ),
        ]);
        assert_eq!(find_cycles(&files), Vec::<String>::new());
    }

    #[test]
    fn a_path_in_an_inline_module_resolves_from_it() {
        // In `mod tests` of b.rs, `super` is `b` and `super::super` the root.
        let files = tree(&[
            ("lib.rs", "mod a;\nmod b;"),
            ("a.rs", "use crate::b;"),
            ("b.rs", "mod tests {\n    use super::super::a::X;\n}"),
        ]);
        assert_eq!(find_cycles(&files), ["a -> b -> a"]);
    }
}

//! Lays out the declarations ts-rs writes (`type X = { a: T, /** doc */ b?: U, };` on one
//! line) the way the package's `.d.ts` reads: an `export interface` per object type, one
//! member per line, `T[]` for arrays, unions of objects one member per line, and doc comments
//! in JSDoc without rustdoc's link brackets. It reads only what ts-rs writes plus the type
//! overrides of `typescript.rs`; anything else it keeps as written.

/// One declaration: its TypeScript name, its doc comment as ts-rs gives it
/// (`/**\n * …\n */\n`), and ts-rs's `type Name = …;`.
pub struct Declaration {
    pub name: String,
    pub docs: Option<String>,
    pub decl: String,
}

/// The `export interface`/`export type` text of each declaration, with its doc comment,
/// ending in a newline. A union written out inside another type (ts-rs inlines a flattened
/// enum) is named when it is one of the declared ones.
pub fn declarations(ds: &[Declaration]) -> Vec<String> {
    let parsed: Vec<Ty> = ds
        .iter()
        .map(|d| {
            let body = d
                .decl
                .strip_prefix(&format!("type {} = ", d.name))
                .and_then(|rest| rest.strip_suffix(';'))
                .unwrap_or_else(|| panic!("{}: unexpected ts-rs declaration: {}", d.name, d.decl));
            Parser::new(body).ty_to_end(&d.name)
        })
        .collect();
    let unions: Vec<(String, String)> = ds
        .iter()
        .zip(&parsed)
        .filter(|(_, ty)| matches!(ty, Ty::Union(_)))
        .map(|(d, ty)| (ty.render(""), d.name.clone()))
        .collect();
    ds.iter()
        .zip(parsed)
        .map(|(d, ty)| declaration(d, ty.name_unions_inside(&unions)))
        .collect()
}

fn declaration(d: &Declaration, ty: Ty) -> String {
    let mut out = d
        .docs
        .as_deref()
        .map(|docs| doc(docs, ""))
        .unwrap_or_default();
    match ty {
        Ty::Object(fields) => {
            out.push_str(&format!("export interface {} {{\n", d.name));
            for field in &fields {
                out.push_str(&member(field, "  "));
            }
            out.push_str("}\n");
        }
        Ty::Union(members) if members.iter().any(|m| !m.is_simple()) || long(&members) => {
            out.push_str(&format!("export type {} =\n", d.name));
            for (i, m) in members.iter().enumerate() {
                let end = if i + 1 == members.len() { ";" } else { "" };
                let m = match m {
                    Ty::Intersection(_) => format!("({})", m.render("  ")),
                    _ => m.render("  "),
                };
                out.push_str(&format!("  | {m}{end}\n"));
            }
        }
        ty => out.push_str(&format!("export type {} = {};\n", d.name, ty.render(""))),
    }
    out
}

/// A union too long for one line.
fn long(members: &[Ty]) -> bool {
    members
        .iter()
        .map(|m| m.render("").len() + 3)
        .sum::<usize>()
        > 90
}

/// A doc comment as JSDoc at `indent`: one line as `/** … */`, more as a block. Rustdoc's
/// intra-doc links (``[`Name`]``, ``[`Name`](path)``) become plain code spans.
fn doc(docs: &str, indent: &str) -> String {
    let lines: Vec<String> = docs
        .trim()
        .trim_start_matches("/**")
        .trim_end_matches("*/")
        .lines()
        .map(|l| l.trim_start().strip_prefix('*').unwrap_or(l.trim_start()))
        .map(|l| {
            unlink(l.strip_prefix(' ').unwrap_or(l))
                .trim_end()
                .to_owned()
        })
        .skip_while(String::is_empty)
        .collect();
    let lines: Vec<&str> = {
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines[..end].iter().map(String::as_str).collect()
    };
    match lines.as_slice() {
        [] => String::new(),
        [one] => format!("{indent}/** {one} */\n"),
        many => {
            let mut out = format!("{indent}/**\n");
            for line in many {
                if line.is_empty() {
                    out.push_str(&format!("{indent} *\n"));
                } else {
                    out.push_str(&format!("{indent} * {line}\n"));
                }
            }
            out.push_str(&format!("{indent} */\n"));
            out
        }
    }
}

/// ``[`x`]`` → `` `x` ``, dropping a `(path)` right after it.
fn unlink(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("[`") {
        let Some(len) = rest[at + 2..].find("`]") else {
            break;
        };
        out.push_str(&rest[..at]);
        out.push_str(&rest[at + 1..at + 2 + len + 1]);
        rest = &rest[at + 2 + len + 2..];
        if rest.starts_with('(') {
            if let Some(close) = rest.find(')') {
                rest = &rest[close + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A member of an object type at `indent`, with its doc comment: `name?: T;`.
fn member(field: &Field, indent: &str) -> String {
    let docs = field
        .docs
        .as_deref()
        .map(|d| doc(d, indent))
        .unwrap_or_default();
    let q = if field.optional { "?" } else { "" };
    format!(
        "{docs}{indent}{}{q}: {};\n",
        field.key,
        field.ty.render(indent)
    )
}

#[derive(Debug, Clone)]
enum Ty {
    Union(Vec<Ty>),
    Intersection(Vec<Ty>),
    Object(Vec<Field>),
    Array(Box<Ty>),
    /// Anything else, as written: names, literals, `Record<K, V>`, function types.
    Raw(String),
}

#[derive(Debug, Clone)]
struct Field {
    docs: Option<String>,
    key: String,
    optional: bool,
    ty: Ty,
}

impl Ty {
    /// `self` with every union inside it that is one of `unions` (text, name) by its name.
    fn name_unions_inside(self, unions: &[(String, String)]) -> Ty {
        let name = |t: Ty| {
            let t = t.name_unions_inside(unions);
            if let Ty::Union(_) = t {
                let text = t.render("");
                if let Some((_, name)) = unions.iter().find(|(u, _)| *u == text) {
                    return Ty::Raw(name.clone());
                }
            }
            t
        };
        match self {
            Ty::Union(ts) => Ty::Union(
                ts.into_iter()
                    .map(|t| t.name_unions_inside(unions))
                    .collect(),
            ),
            Ty::Intersection(ts) => Ty::Intersection(ts.into_iter().map(name).collect()),
            Ty::Array(t) => Ty::Array(Box::new(name(*t))),
            Ty::Object(fields) => Ty::Object(
                fields
                    .into_iter()
                    .map(|f| Field {
                        ty: name(f.ty),
                        ..f
                    })
                    .collect(),
            ),
            raw => raw,
        }
    }

    /// Fits on a line: no object with documented members.
    fn is_simple(&self) -> bool {
        match self {
            Ty::Raw(_) => true,
            Ty::Array(t) => t.is_simple(),
            Ty::Union(ts) | Ty::Intersection(ts) => ts.iter().all(Ty::is_simple),
            Ty::Object(fields) => fields.iter().all(|f| f.docs.is_none() && f.ty.is_simple()),
        }
    }

    /// The type at `indent` (the indentation of the line it starts on).
    fn render(&self, indent: &str) -> String {
        match self {
            Ty::Raw(text) => text.clone(),
            Ty::Array(inner) => match **inner {
                Ty::Union(_) | Ty::Intersection(_) => format!("({})[]", inner.render(indent)),
                _ => format!("{}[]", inner.render(indent)),
            },
            Ty::Union(members) => join(members, " | ", indent, |t| matches!(t, Ty::Union(_))),
            Ty::Intersection(members) => join(members, " & ", indent, |t| {
                matches!(t, Ty::Union(_) | Ty::Intersection(_))
            }),
            Ty::Object(fields) if fields.is_empty() => "{}".to_owned(),
            Ty::Object(fields) => {
                let line = format!(
                    "{{ {} }}",
                    fields
                        .iter()
                        .map(|f| {
                            let q = if f.optional { "?" } else { "" };
                            format!("{}{q}: {}", f.key, f.ty.render(indent))
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                if self.is_simple() && line.len() + indent.len() <= 96 {
                    return line;
                }
                let inner = format!("{indent}  ");
                let mut out = "{\n".to_owned();
                for field in fields {
                    out.push_str(&member(field, &inner));
                }
                out.push_str(indent);
                out.push('}');
                out
            }
        }
    }
}

fn join(members: &[Ty], sep: &str, indent: &str, paren: impl Fn(&Ty) -> bool) -> String {
    members
        .iter()
        .map(|m| {
            if paren(m) {
                format!("({})", m.render(indent))
            } else {
                m.render(indent)
            }
        })
        .collect::<Vec<_>>()
        .join(sep)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Doc(String),
    Str(String),
    Word(String),
    Punct(&'static str),
}

fn tokens(text: &str) -> Vec<Token> {
    const PUNCT: [&str; 16] = [
        "=>", "{", "}", "(", ")", "[", "]", "<", ">", ",", ";", ":", "?", "|", "&", "=",
    ];
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if rest.starts_with("/**") {
            let end = rest.find("*/").expect("a closed doc comment") + 2;
            out.push(Token::Doc(rest[..end].to_owned()));
            rest = &rest[end..];
        } else if c == '"' {
            let mut end = 1;
            let bytes = rest.as_bytes();
            while bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            out.push(Token::Str(rest[..=end].to_owned()));
            rest = &rest[end + 1..];
        } else if let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) {
            out.push(Token::Punct(p));
            rest = &rest[p.len()..];
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
                .unwrap_or(rest.len());
            assert!(end > 0, "cannot read {rest:?}");
            out.push(Token::Word(rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    out
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn new(text: &str) -> Self {
        Parser {
            tokens: tokens(text),
            at: 0,
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Token::Punct(q)) if *q == p)
    }

    fn ty_to_end(mut self, name: &str) -> Ty {
        let ty = self.ty();
        assert!(
            self.at == self.tokens.len(),
            "{name}: cannot read past {:?}",
            &self.tokens[self.at..]
        );
        ty
    }

    /// A union of intersections, up to a `,`, `;`, `}`, `)`, `]`, `>` at this depth.
    fn ty(&mut self) -> Ty {
        if self.is("|") {
            self.at += 1;
        }
        let mut members = vec![self.intersection()];
        while self.is("|") {
            self.at += 1;
            members.push(self.intersection());
        }
        let members: Vec<Ty> = members
            .into_iter()
            .flat_map(|m| match m {
                Ty::Union(inner) => inner,
                m => vec![m],
            })
            .collect();
        if members.len() == 1 {
            members.into_iter().next().expect("one member")
        } else {
            Ty::Union(members)
        }
    }

    fn intersection(&mut self) -> Ty {
        let mut factors = vec![self.factor()];
        while self.is("&") {
            self.at += 1;
            factors.push(self.factor());
        }
        let factors: Vec<Ty> = factors
            .into_iter()
            .flat_map(|f| match f {
                Ty::Intersection(inner) => inner,
                f => vec![f],
            })
            .collect();
        // `{ a } & { b }` (ts-rs's flatten) is one object `{ a; b }`.
        if factors.len() > 1 && factors.iter().all(|f| matches!(f, Ty::Object(_))) {
            let mut fields = Vec::new();
            for f in factors {
                if let Ty::Object(more) = f {
                    fields.extend(more);
                }
            }
            return Ty::Object(fields);
        }
        if factors.len() == 1 {
            factors.into_iter().next().expect("one factor")
        } else {
            Ty::Intersection(factors)
        }
    }

    fn factor(&mut self) -> Ty {
        if self.is("{") {
            let start = self.at;
            if let Some(object) = self.object() {
                return object;
            }
            // Not a plain object type (a method signature): kept as written.
            self.at = start;
            return Ty::Raw(self.raw());
        }
        if self.is("(") {
            let start = self.at;
            self.at += 1;
            let inner = self.ty();
            if self.is(")") {
                self.at += 1;
                if !self.is("=>") {
                    return self.postfix(inner);
                }
            }
            // A function type: kept as written.
            self.at = start;
            return Ty::Raw(self.raw());
        }
        if matches!(self.peek(), Some(Token::Word(w)) if w == "Array")
            && matches!(self.tokens.get(self.at + 1), Some(Token::Punct("<")))
        {
            self.at += 2;
            let inner = self.ty();
            assert!(self.is(">"), "Array<…> not closed");
            self.at += 1;
            return self.postfix(Ty::Array(Box::new(inner)));
        }
        let raw = self.raw();
        self.postfix(Ty::Raw(raw))
    }

    /// `T[]` suffixes.
    fn postfix(&mut self, mut ty: Ty) -> Ty {
        while self.is("[") && matches!(self.tokens.get(self.at + 1), Some(Token::Punct("]"))) {
            self.at += 2;
            ty = Ty::Array(Box::new(ty));
        }
        ty
    }

    /// `{ doc? key?: T, … }`, or `None` if it is not that.
    fn object(&mut self) -> Option<Ty> {
        self.at += 1;
        let mut fields = Vec::new();
        loop {
            let mut docs = None;
            while let Some(Token::Doc(d)) = self.peek() {
                docs = Some(d.clone());
                self.at += 1;
            }
            if self.is("}") {
                self.at += 1;
                return Some(Ty::Object(fields));
            }
            let key = match self.peek()?.clone() {
                Token::Word(w) => {
                    self.at += 1;
                    w
                }
                Token::Str(s) => {
                    self.at += 1;
                    let bare = &s[1..s.len() - 1];
                    let ident = bare.chars().enumerate().all(|(i, c)| {
                        c.is_alphanumeric() && (i > 0 || !c.is_numeric()) || c == '_' || c == '$'
                    });
                    if ident && !bare.is_empty() {
                        bare.to_owned()
                    } else {
                        s
                    }
                }
                // `[key in string]: V` (a flattened map): an index signature.
                Token::Punct("[") => {
                    let close = self.tokens[self.at..]
                        .iter()
                        .position(|t| *t == Token::Punct("]"))?;
                    let inside = &self.tokens[self.at + 1..self.at + close];
                    let key = match inside {
                        [Token::Word(_), Token::Word(in_), Token::Word(k)] if in_ == "in" => {
                            format!("[other: {k}]")
                        }
                        _ => return None,
                    };
                    self.at += close + 1;
                    key
                }
                _ => return None,
            };
            let optional = self.is("?");
            if optional {
                self.at += 1;
            }
            if !self.is(":") {
                return None;
            }
            self.at += 1;
            let ty = self.ty();
            fields.push(Field {
                docs,
                key,
                optional,
                ty,
            });
            if self.is(",") || self.is(";") {
                self.at += 1;
            }
        }
    }

    /// Tokens up to a `|`, `&`, `,`, `;` or closing bracket at this depth, spaced as usual.
    fn raw(&mut self) -> String {
        let mut depth = 0usize;
        let mut out = String::new();
        let mut prev: Option<Token> = None;
        while let Some(t) = self.peek().cloned() {
            if let Token::Punct(p) = t {
                match p {
                    "{" | "(" | "[" | "<" => depth += 1,
                    "}" | ")" | "]" | ">" if depth == 0 => break,
                    "}" | ")" | "]" | ">" => depth -= 1,
                    "|" | "&" | "," | ";" if depth == 0 => break,
                    _ => {}
                }
            }
            if let Some(prev) = &prev {
                if space_between(prev, &t) {
                    out.push(' ');
                }
            }
            out.push_str(match &t {
                Token::Doc(d) | Token::Str(d) | Token::Word(d) => d,
                Token::Punct(p) => p,
            });
            prev = Some(t);
            self.at += 1;
        }
        out
    }
}

fn space_between(prev: &Token, next: &Token) -> bool {
    use Token::Punct;
    match (prev, next) {
        (_, Punct("|" | "&" | "=>" | "=")) => true,
        (Punct("," | ":" | "|" | "&" | "=>" | "=" | ";"), _) => true,
        (Punct("{"), Punct("}")) => false,
        (Punct("{"), _) | (_, Punct("}")) => true,
        (Token::Word(_) | Token::Str(_), Token::Word(_) | Token::Str(_)) => true,
        _ => false,
    }
}

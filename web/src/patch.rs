//! Elements the inspector rewrites on every edit (the budget, the section bars, the history
//! fates), described as plain values and patched into the page in place: only the
//! attributes and texts that changed are written, so the rows already laid out stay (a
//! rewrite as HTML tore down and rebuilt every row, ~0.15 ms a list on each edit of a
//! 10⁴-message session; a tachys rebuild sets every attribute again; docs/architecture.md
//! §13, "Update cost"). Texts are text nodes, never parsed as HTML.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlElement, Node};

/// One element to write: its tag, attributes, width and children.
#[derive(Debug, Clone, PartialEq)]
pub struct El {
    pub tag: &'static str,
    pub attrs: Vec<(&'static str, String)>,
    /// A CSS width, set through the CSSOM: the bridge's Content-Security-Policy
    /// (`style-src 'self'`) refuses style attributes, not style properties.
    pub width: Option<String>,
    pub kids: Vec<Kid>,
}

/// A child of an [`El`]: text or an element.
#[derive(Debug, Clone, PartialEq)]
pub enum Kid {
    Text(String),
    El(El),
}

impl El {
    // The builders are not inlined: each of their many call sites is then a call, not a
    // copy of the vector's growth (the page's size, docs/architecture.md §18).
    #[inline(never)]
    pub fn new(tag: &'static str) -> Self {
        El {
            tag,
            attrs: Vec::new(),
            width: None,
            kids: Vec::new(),
        }
    }

    #[inline(never)]
    pub fn attr(mut self, name: &'static str, value: String) -> Self {
        self.attrs.push((name, value));
        self
    }

    #[inline(never)]
    pub fn width(mut self, width: String) -> Self {
        self.width = Some(width);
        self
    }

    #[inline(never)]
    pub fn text(mut self, text: String) -> Self {
        self.kids.push(Kid::Text(text));
        self
    }

    #[inline(never)]
    pub fn kid(mut self, el: El) -> Self {
        self.kids.push(Kid::El(el));
        self
    }

    /// Its text as the page shows it (`textContent`), for tests.
    #[cfg(test)]
    pub fn text_content(&self) -> String {
        self.kids
            .iter()
            .map(|k| match k {
                Kid::Text(t) => t.clone(),
                Kid::El(e) => e.text_content(),
            })
            .collect()
    }
}

/// Makes `parent`'s children `new`, given that they were last written as `written` (kept in
/// step): an element of the same tag and shape is updated in place, any other built anew.
/// Children that something else replaced (the view was built again) are all rebuilt.
pub fn patch(parent: &Element, written: &mut Vec<El>, new: &[El]) {
    let Some(document) = parent.owner_document() else {
        return;
    };
    let nodes = parent.child_nodes();
    if nodes.length() as usize != written.len() {
        parent.set_text_content(None);
        written.clear();
    }
    for (i, el) in new.iter().enumerate() {
        match (written.get(i), parent.children().item(i as u32)) {
            (Some(old), Some(node)) if same_shape(old, el) => update(&node, old, el),
            (_, Some(node)) => {
                let _ = parent.replace_child(&build(&document, el), &node);
            }
            (_, None) => {
                let _ = parent.append_child(&build(&document, el));
            }
        }
    }
    while parent.child_element_count() as usize > new.len() {
        if let Some(last) = parent.last_element_child() {
            last.remove();
        }
    }
    *written = new.to_vec();
}

/// Whether `new` can be written over `old`'s element: the same tag, and children of the
/// same kinds and shapes.
fn same_shape(old: &El, new: &El) -> bool {
    old.tag == new.tag
        && old.kids.len() == new.kids.len()
        && old.kids.iter().zip(&new.kids).all(|pair| match pair {
            (Kid::Text(_), Kid::Text(_)) => true,
            (Kid::El(a), Kid::El(b)) => same_shape(a, b),
            _ => false,
        })
}

fn update(node: &Element, old: &El, new: &El) {
    for (name, value) in &new.attrs {
        let was = old.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        if was != Some(value) {
            let _ = node.set_attribute(name, value);
        }
    }
    for (name, _) in &old.attrs {
        if !new.attrs.iter().any(|(n, _)| n == name) {
            let _ = node.remove_attribute(name);
        }
    }
    if old.width != new.width {
        set_width(node, new.width.as_deref());
    }
    let kids = node.child_nodes();
    for (i, (was, kid)) in old.kids.iter().zip(&new.kids).enumerate() {
        let Some(child) = kids.item(i as u32) else {
            continue;
        };
        match (was, kid) {
            (Kid::Text(was), Kid::Text(text)) if was != text => child.set_node_value(Some(text)),
            (Kid::El(was), Kid::El(el)) => {
                if let Ok(child) = child.dyn_into::<Element>() {
                    update(&child, was, el);
                }
            }
            _ => {}
        }
    }
}

fn build(document: &Document, el: &El) -> Node {
    let Ok(node) = document.create_element(el.tag) else {
        return document.create_text_node("").into();
    };
    for (name, value) in &el.attrs {
        let _ = node.set_attribute(name, value);
    }
    set_width(&node, el.width.as_deref());
    for kid in &el.kids {
        let child = match kid {
            Kid::Text(text) => document.create_text_node(text).into(),
            Kid::El(el) => build(document, el),
        };
        let _ = node.append_child(&child);
    }
    node.into()
}

fn set_width(node: &Element, width: Option<&str>) {
    if let Some(node) = node.dyn_ref::<HtmlElement>() {
        let style = node.style();
        let _ = match width {
            Some(w) => style.set_property("width", w),
            None => style.remove_property("width").map(drop),
        };
    }
}

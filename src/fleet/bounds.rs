//! How much of a server's text an object keeps.

use std::borrow::Cow;

use super::SharedText;

/// The most of each text kept from an object: a server's strings are untrusted and a summary
/// stays small whatever the server sends. Longer texts are cut and end in `…`.
pub mod limits {
    /// Kubernetes allows 253 characters in a name (63 in a namespace); longer is not an object.
    pub const NAME: usize = 253;
    pub const REASON: usize = 128;
    pub const MESSAGE: usize = 2048;
    /// Revisions, tokens, who suspended an object.
    pub const SHORT: usize = 256;
    pub const SUSPEND_REASON: usize = 512;
    /// `dependsOn` entries kept.
    pub const DEPENDS_ON: usize = 64;
}

/// `text`, cut to at most `max` characters (the last one then `…`).
pub fn bounded(text: &str, max: usize) -> Box<str> {
    bounded_text(text, max).into()
}

/// A text to be shared between the objects of a fleet, bounded; none when it is empty.
pub fn shared(text: Option<&str>, max: usize) -> Option<SharedText> {
    text.filter(|s| !s.is_empty())
        .map(|s| SharedText::read(&bounded_text(s, max)))
}

/// [`bounded`], borrowing `text` when it is short enough (most are): for a text about to be
/// shared ([`SharedText`]), which is then its only copy.
pub fn bounded_text(text: &str, max: usize) -> Cow<'_, str> {
    // No more bytes than `max` is no more characters either.
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(text.len(), |(i, _)| i);
            Cow::Owned(format!("{}…", &text[..cut]))
        }
    }
}

//! Token estimates (docs/architecture.md §9, §19 (seed 002)): an optional second budget beside the
//! byte budget.
//!
//! The only estimator is docs/architecture.md §19 (seed 002)'s `ceil(chars / 4)`; exact BPE counts
//! would plug in here.

use serde::{Deserialize, Serialize};

/// Which token estimate the explain reports and a token budget (`maxTokens`) is kept with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum TokenEstimator {
    /// No token figures (unless `maxTokens` is set, which implies [`Self::CharsDiv4`]).
    #[default]
    None,
    /// `ceil(chars / 4)`, docs/architecture.md §19 (seed 002)'s estimate.
    CharsDiv4,
}

impl TokenEstimator {
    /// The estimate of `text`, or `None` when no estimator is set.
    pub fn estimate(self, text: &str) -> Option<usize> {
        match self {
            TokenEstimator::None => None,
            TokenEstimator::CharsDiv4 => Some(estimate_chars_div4(text)),
        }
    }

    /// The estimator in force: a token budget needs one, so `maxTokens` selects `chars/4`.
    pub(crate) fn with_budget(self, max_tokens: Option<usize>) -> Self {
        match (self, max_tokens) {
            (TokenEstimator::None, Some(_)) => TokenEstimator::CharsDiv4,
            (estimator, _) => estimator,
        }
    }
}

/// Estimated tokens of `text`: one per four characters, rounded up.
pub(crate) fn estimate_chars_div4(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

//! Helpers for code inside sled transactions.

use sled::transaction::TransactionalTree;

use crate::error::{Error, TxError, abort};
use crate::tree_keys;

/// Adds `delta` to the count at `key` in the `counts` tree; a count that reaches zero is
/// removed, so the tree holds only live workspaces and types.
pub(crate) fn add_count(counts: &TransactionalTree, key: &[u8], delta: i64) -> Result<(), TxError> {
    let old = match counts.get(key)? {
        Some(v) => tree_keys::decode_u64("count", &v).map_err(abort)?,
        None => 0,
    };
    let new = old.checked_add_signed(delta).ok_or_else(|| {
        abort(Error::invalid(
            "count",
            format!("{old} {delta:+} is out of range"),
        ))
    })?;
    if new == 0 {
        counts.remove(key)?;
    } else {
        counts.insert(key, &new.to_be_bytes()[..])?;
    }
    Ok(())
}

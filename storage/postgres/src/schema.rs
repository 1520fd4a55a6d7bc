//! The PostgreSQL schema the store's tables live in: its name, checked to be a plain
//! identifier, and quoted for the statements.

use crate::error::Error;

/// A validated schema name and its quoted form, formatted into every statement.
#[derive(Debug)]
pub(crate) struct Schema {
    /// The name as given.
    pub(crate) name: String,
    /// The name as a quoted SQL identifier, e.g. `"assetlib"`.
    pub(crate) q: String,
}

impl Schema {
    pub(crate) fn new(name: &str) -> Result<Self, Error> {
        let mut chars = name.chars();
        let valid = name.len() <= 63
            && chars
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.starts_with("pg_");
        if !valid {
            return Err(Error::InvalidSchemaName {
                name: name.to_owned(),
            });
        }
        Ok(Schema {
            name: name.to_owned(),
            q: format!("\"{name}\""),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for good in ["assetlib", "_x", "tenant_42", &"a".repeat(63)] {
            let s = Schema::new(good).expect(good);
            assert_eq!(s.q, format!("\"{good}\""));
        }
        for bad in ["", "A", "9x", "a-b", "a b", "pg_x", "é", &"a".repeat(64)] {
            assert!(Schema::new(bad).is_err(), "{bad:?}");
        }
    }
}

//! Enumerations written as fixed lowercase words in YAML.
//!
//! Every such enum is declared once with [`named_enum!`], which gives it its
//! YAML spelling, `Display`, `Serialize` and the list of allowed words that
//! error messages show. Nothing else spells these words out, except for the
//! enums the configuration shares with another crate of redio (one type for
//! both, e.g. `redio_protocols::OnMismatch`): those spell their words
//! themselves (`const fn name`), and `named_enum! { impl … }` only lists
//! their variants.

/// A closed set of values, each written as one fixed word in YAML.
pub trait Named: Sized + Copy + 'static {
    /// What one value is called in messages, e.g. `protocol` or `layout`.
    const NOUN: &'static str;
    /// Every value with its YAML spelling, in the order the documentation uses.
    const ALL: &'static [(Self, &'static str)];

    /// The YAML spelling of this value.
    fn as_str(self) -> &'static str;

    /// The value spelled `word` (exact, lowercase), if there is one.
    fn from_name(word: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, name)| *name == word)
            .map(|(value, _)| *value)
    }

    /// The allowed spellings joined with `, `, for messages and documentation.
    fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|(_, name)| *name).collect();
        names.join(", ")
    }
}

/// Declares an enum whose values are written as fixed words in YAML.
///
/// `$noun` names a value in messages ("unknown protocol ...").
///
/// The second form, `impl Name ("noun") { Variant, … }`, makes an enum of
/// another crate of redio a configuration value, so that one type serves
/// both. The type must be in scope, spell each value with a
/// `const fn name(self) -> &'static str` and implement `Display` itself;
/// every variant must be listed (the generated `match` is exhaustive, so a
/// variant added there and not here does not compile). Fields of such a type
/// are serialised with `emit::named` / `emit::named_opt` (`Serialize` of a
/// type of another crate cannot be implemented here).
macro_rules! named_enum {
    (
        impl $name:ident ($noun:literal) {
            $( $variant:ident, )+
        }
    ) => {
        impl $crate::config::named::Named for $name {
            const NOUN: &'static str = $noun;
            const ALL: &'static [(Self, &'static str)] =
                &[ $( ($name::$variant, $name::$variant.name()), )+ ];

            fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant )|+ => self.name(),
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($noun:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $crate::config::named::Named for $name {
            const NOUN: &'static str = $noun;
            const ALL: &'static [(Self, &'static str)] = &[ $( ($name::$variant, $word), )+ ];

            fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::config::named::Named::as_str(*self))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::config::named::Named::as_str(*self))
            }
        }
    };
}

pub(crate) use named_enum;

//! Reading a JSON document in one pass into the fields a format needs, with the rules of
//! [`crate::json`] and its error paths, without building a `serde_json::Value` tree first.
//!
//! A format declares its objects with [`json_object!`] as structs of optional fields
//! ([`Fields`]); serde fills them while it parses. Nothing here ever fails on a value of the
//! wrong type: a value that is not what its field reads is kept ([`Read::Other`],
//! [`Field::Other`], [`List::Other`], as a boxed `Value`; a number or a boolean where a
//! [`Field`] stands is held inline) until the format's rules ask for it, and only then becomes
//! an error that names its path, the type expected and what was found. So a format stays as
//! lenient as its rules (a key the rules never read may hold anything) and reads its errors
//! the way a reader over a `Value` would, while a valid document costs one parse: keys matched
//! without copies, strings borrowed from the text where JSON lets them be.
//!
//! The shared rules: `null` counts as absent (a `null` read for a key replaces an earlier
//! value, as the last value of a repeated key wins), unknown keys are ignored.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{FieldError, Path};

/// The arms of a visitor for the kinds of value it does not read (`bool`, `i64`, `u64`,
/// `f64`, `unit`, `str`, `seq`, `map`): each hands the value, as a `Value`, to the visitor's
/// own `keep`, which keeps it (boxed, so the field structs stay small) to name it in an error.
macro_rules! kept_as_value {
    ($($kind:ident),* $(,)?) => {
        $(kept_as_value!(@ $kind);)*
    };
    (@ bool) => {
        fn visit_bool<E: ::serde::de::Error>(self, b: bool) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::Bool(b))
        }
    };
    (@ i64) => {
        fn visit_i64<E: ::serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::from(n))
        }
    };
    (@ u64) => {
        fn visit_u64<E: ::serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::from(n))
        }
    };
    (@ f64) => {
        fn visit_f64<E: ::serde::de::Error>(self, n: f64) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::from(n))
        }
    };
    (@ unit) => {
        fn visit_unit<E: ::serde::de::Error>(self) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::Null)
        }
    };
    (@ str) => {
        fn visit_str<E: ::serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
            self.keep(::serde_json::Value::String(s.to_owned()))
        }
    };
    (@ seq) => {
        fn visit_seq<A: ::serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            let v = <::serde_json::Value as ::serde::Deserialize>::deserialize(
                ::serde::de::value::SeqAccessDeserializer::new(seq),
            )?;
            self.keep(v)
        }
    };
    (@ map) => {
        fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let v = <::serde_json::Value as ::serde::Deserialize>::deserialize(
                ::serde::de::value::MapAccessDeserializer::new(map),
            )?;
            self.keep(v)
        }
    };
}
pub(crate) use kept_as_value;

/// Declares a JSON object's fields as a struct with one optional value per key, and reads
/// them ([`Fields`]): each key's value goes to its field (`null` is absent, the last of a
/// repeated key wins); a nested object marked `[in_place]` is filled where it lies
/// ([`InPlace`]); keys not listed are skipped.
macro_rules! json_object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<'de> {
            $($(#[$field_meta:meta])* $key:literal => $field:ident: $ty:ty $([$how:ident])?),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        $vis struct $name<'de> {
            $($(#[$field_meta])* $field: Option<$ty>,)*
        }

        impl<'de> $crate::json::fields::Fields<'de> for $name<'de> {
            fn read<A: ::serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match key {
                    $($key => $crate::json::fields::json_object!(@read map, self.$field $(, $how)?),)*
                    _ => $crate::json::fields::skip(map)?,
                }
                Ok(())
            }
        }
    };
    (@read $map:ident, $slot:expr) => {
        $slot = $crate::json::fields::next($map)?
    };
    (@read $map:ident, $slot:expr, in_place) => {
        $crate::json::fields::next_in_place($map, &mut $slot)?
    };
}
pub(crate) use json_object;

/// The keys of an object, read one by one: `read` takes the value of each key it knows (with
/// [`next`]) and skips the others (with [`skip`]).
pub(crate) trait Fields<'de>: Default {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// The value of the current key; `null` reads as `None`.
pub(crate) fn next<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
) -> Result<Option<T>, A::Error> {
    map.next_value::<Option<T>>()
}

/// Skips the value of a key no rule reads, whatever it is.
pub(crate) fn skip<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<de::IgnoredAny>().map(drop)
}

/// Reads the rest of an array without keeping it (after its first problem): the text must
/// still be JSON to the end, so a syntax error further on is the one reported.
pub(crate) fn skip_rest<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<(), A::Error> {
    while seq.next_element::<de::IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A field the rules require: its value, or `path: missing`.
pub(crate) fn required<T>(field: Option<T>, path: &Path<'_>) -> Result<T, FieldError> {
    field.ok_or_else(|| path.missing())
}

/// An object read into `T`, or whatever else stood there.
pub(crate) enum Read<T> {
    Object(T),
    Other(Box<Value>),
}

impl<T> Read<T> {
    /// The object's fields, or `path: expected an object, found …`.
    pub(crate) fn object(self, path: Path<'_>) -> Result<T, FieldError> {
        match self {
            Read::Object(t) => Ok(t),
            Read::Other(v) => Err(path.wrong_type("an object", &v)),
        }
    }
}

impl<'de, T: Fields<'de>> Deserialize<'de> for Read<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut slot = None;
        InPlace(&mut slot).deserialize(d)?;
        Ok(slot.unwrap_or_else(|| Read::Other(Box::new(Value::Null))))
    }
}

/// Reads the current key's value into `slot` where it lies (see [`InPlace`]).
pub(crate) fn next_in_place<'de, T: Fields<'de>, A: MapAccess<'de>>(
    map: &mut A,
    slot: &mut Option<Read<T>>,
) -> Result<(), A::Error> {
    map.next_value_seed(InPlace(slot))
}

/// A value read into a slot rather than returned: a nested object's fields are filled where
/// they will stay, instead of being built and then moved at every level up. `null` empties
/// the slot.
pub(crate) struct InPlace<'a, T>(pub(crate) &'a mut Option<Read<T>>);

impl<'de, T: Fields<'de>> DeserializeSeed<'de> for InPlace<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Fields<'de>> Visitor<'de> for InPlace<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        *self.0 = Some(Read::Object(T::default()));
        if let Some(Read::Object(fields)) = self.0 {
            while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                fields.read(&key, &mut map)?;
            }
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    kept_as_value!(bool, i64, u64, f64, str, seq);
}

impl<T> InPlace<'_, T> {
    fn keep<E>(self, v: Value) -> Result<(), E> {
        *self.0 = Some(Read::Other(Box::new(v)));
        Ok(())
    }
}

/// An object's key, borrowed from the text unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A scalar: a string (borrowed from the text where it can be), or whatever else stood there
/// (a number or a boolean, read when the rules ask for one, or kept to name it in an error).
pub(crate) enum Field<'de> {
    Str(Cow<'de, str>),
    /// A non-negative integer, the other scalar most fields hold (`at`, `version`).
    U64(u64),
    Bool(bool),
    /// Anything else, boxed: it is only ever read to name it in an error (or, for a rule that
    /// takes several types, through [`Field::into_value`]).
    Other(Box<Value>),
}

impl<'de> Field<'de> {
    /// The string, or `path: expected a string, found …`.
    pub(crate) fn string(self, path: &Path<'_>) -> Result<Cow<'de, str>, FieldError> {
        match self {
            Field::Str(s) => Ok(s),
            other => Err(path.wrong_type("a string", &other.into_value())),
        }
    }

    /// A non-negative integer, or `path: expected a non-negative integer, found …`.
    pub(crate) fn unsigned(self, path: &Path<'_>) -> Result<u64, FieldError> {
        match self {
            Field::U64(n) => Ok(n),
            other => super::unsigned(&other.into_value(), path),
        }
    }

    /// `true` or `false`, or `path: expected true or false, found …`.
    pub(crate) fn boolean(self, path: &Path<'_>) -> Result<bool, FieldError> {
        match self {
            Field::Bool(b) => Ok(b),
            other => super::boolean(&other.into_value(), path),
        }
    }

    /// The value as a `serde_json::Value`, for a rule that reads several types or for an error.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Field::Str(s) => Value::String(s.into_owned()),
            Field::U64(n) => Value::from(n),
            Field::Bool(b) => Value::Bool(b),
            Field::Other(v) => *v,
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(s)))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Field<'de>, E> {
                Ok(Field::U64(n))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Field<'de>, E> {
                Ok(Field::Bool(b))
            }
            kept_as_value!(i64, f64, unit, seq, map);
        }
        impl V {
            fn keep<'de, E>(self, v: Value) -> Result<Field<'de>, E> {
                Ok(Field::Other(Box::new(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// An array of `T`, or whatever else stood there.
pub(crate) enum List<T> {
    Items(Vec<T>),
    Other(Box<Value>),
}

impl<T> List<T> {
    /// The items, or `path: expected an array, found …`.
    pub(crate) fn items(self, path: &Path<'_>) -> Result<Vec<T>, FieldError> {
        match self {
            List::Items(items) => Ok(items),
            List::Other(v) => Err(path.wrong_type("an array", &v)),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(List::Items(items))
            }
            kept_as_value!(bool, i64, u64, f64, unit, str, map);
        }
        impl<T> V<T> {
            fn keep<E>(self, v: Value) -> Result<List<T>, E> {
                Ok(List::Other(Box::new(v)))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An array of strings, read straight into `String`s; or the first item that is not a string
/// (its index and value), or whatever else stood there instead of an array.
pub(crate) enum Strings {
    Items(Vec<String>),
    NotAString(usize, Box<Value>),
    Other(Box<Value>),
}

impl Strings {
    /// The strings, or `path[i]: expected a string, found …` / `path: expected an array, …`.
    pub(crate) fn items(self, path: &Path<'_>) -> Result<Vec<String>, FieldError> {
        match self {
            Strings::Items(items) => Ok(items),
            Strings::NotAString(i, v) => Err(path.index(i).wrong_type("a string", &v)),
            Strings::Other(v) => Err(path.wrong_type("an array", &v)),
        }
    }
}

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strings, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(item) = seq.next_element::<Field<'de>>()? {
                    match item {
                        Field::Str(s) => items.push(s.into_owned()),
                        other => {
                            let index = items.len();
                            skip_rest(&mut seq)?;
                            return Ok(Strings::NotAString(index, Box::new(other.into_value())));
                        }
                    }
                }
                Ok(Strings::Items(items))
            }
            kept_as_value!(bool, i64, u64, f64, unit, str, map);
        }
        impl V {
            fn keep<E>(self, v: Value) -> Result<Strings, E> {
                Ok(Strings::Other(Box::new(v)))
            }
        }
        d.deserialize_any(V)
    }
}

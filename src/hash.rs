//! The core's hash map: fixed keys, so the core reads no random source, not even the OS seed
//! `std`'s default hasher asks for (docs/architecture.md §2), and iteration never varies between
//! hosts. foldhash's fixed-seed hasher is several times faster than SipHash on the short id keys
//! the store looks up for every message.

/// A `HashMap` with foldhash's fixed-seed hasher.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

//! Errors of the core, each naming what was wrong and where.

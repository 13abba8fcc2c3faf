//! Snapshot v1 export/import, validated fully before anything changes (DESIGN §11).

"""The database: everything that speaks SQL (see docs/architecture.md, "The store").

The modules are imported by name; this package imports none of them, so
that `config` can use `store.urls` without an import circle."""

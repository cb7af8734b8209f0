"""commonplace HTTP server: a thin Flask layer over the compiler."""

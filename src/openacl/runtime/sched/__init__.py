"""The scheduler: lock -> task -> waitgraph -> waiting -> event -> stream -> engine (each imports only those
before it); tracing is beside them."""

"""The device model: plain Python objects and functions that raise ``AclError``; knows no facade, no model,
no dump.

Modules: ``sched/`` (the scheduler: lock, tasks, waits and the wait graph, events, streams, engines),
``device`` (devices, contexts, stream and event lifetimes), ``report`` (stream callbacks), ``memory``
(addresses and checked pointers), ``copies`` (memcpy / memset), ``buffers`` (data buffers), ``handles``
(handle tables), ``context`` (the per-thread current context), ``threads`` (``acl.util`` threads).
"""

"""The device model: plain Python objects and functions that raise ``AclError``; knows no facade.

Modules: ``state`` (init/finalize, config), ``device`` (devices, contexts, stream and event lifetimes),
``stream`` (streams, events, engine), ``report`` (stream callbacks), ``memory`` (addresses and copies),
``threads`` (``acl.util`` threads).
"""

"""Profiling (``acl.prof``): sessions that write msprof's summaries, model subscriptions that feed a pipe with
operator records, and the msproftx stamps, marks and ranges. Knows no model: model/profiled.py hands it the
operator times onnxruntime measured."""

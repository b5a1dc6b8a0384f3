"""How openacl makes its onnxruntime sessions: one set of options for models, their observed twins and single
operators (``OPENACL_ORT_THREADS`` threads, no spinning after a run)."""

from __future__ import annotations

import os

import onnxruntime as ort


def ort_threads() -> int:
    try:
        return max(int(os.environ.get("OPENACL_ORT_THREADS", "0")), 0)
    except ValueError:
        return 0


def session_options(optimize: bool = True, external_data_folder: str | None = None):
    """``external_data_folder``: where a session made from model bytes finds external data (the model's folder)."""
    options = ort.SessionOptions()
    if external_data_folder is not None:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", external_data_folder)
    options.intra_op_num_threads = ort_threads()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Worker threads that spin after a run would take the cores the runtime needs right then (outputs to
    # copy, callbacks, a dump to write); on small machines that costs more than waking them does.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options
